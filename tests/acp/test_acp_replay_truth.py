"""`session/load` replays a session as it was shown (issue 35, docs/adr/0048): what the user
typed (not a skill's text nor hook context), no Stop hook's words as the user's, and a child
stopped by Esc as failed, its report without the `[subagent]` line."""

from __future__ import annotations

import json
from pathlib import Path

from forge.acp.replay import replay_updates
from forge.llm.messages import Message, ToolCall


def test_a_loaded_session_shows_what_was_typed_and_the_child_as_it_ended(tmp_path: Path) -> None:
    figures = {"agent": "helper", "completed": False, "reason": "interrupted"}
    call = ToolCall("t1", "task", '{"agent": "helper", "prompt": "go"}')
    messages = [
        Message(
            "user", "<skill name='greet'>Say hi to Alice</skill>", meta={"typed": "/greet Alice"}
        ),
        Message("user", "A Stop hook did not let the turn end yet:\nrun the tests"),
        Message("assistant", "", (call,)),
        Message(
            "tool",
            f"partial\n\n[subagent] {json.dumps(figures)}",
            tool_call_id="t1",
            name="task",
            meta={"subagent": "helper", "subagent_reason": "interrupted"},
        ),
    ]
    updates = [u.model_dump() for u in replay_updates(messages, tmp_path, lambda c: c.name)]
    said = [
        u["content"]["text"] for u in updates if u.get("session_update") == "user_message_chunk"
    ]
    assert said == ["/greet Alice"]
    [finished] = [u for u in updates if u.get("session_update") == "tool_call_update"]
    assert finished["status"] == "failed"
    assert "[subagent]" not in json.dumps(finished) and "partial" in json.dumps(finished)
