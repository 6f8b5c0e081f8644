"""Edits and the plan as an editor shows them, live and after `session/load`: a new file is a
diff from empty old text, an edit of an existing file one whole-file diff with its changed
lines in `locations`, the plan one `plan` update where the model set it (no tool card beside
it) — and `session/load` replays the same diffs and the plan at the same place, once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

OLD = "".join(f"line {n}\n" for n in range(1, 13))
PLAN = [{"step": "create new.txt", "status": "done"}, {"step": "edit old.txt", "status": "pending"}]


def shown(updates: list[Any]) -> list[tuple[str, str]]:
    """The tool cards and plans in order: ("tool_call", id) or ("plan", its entries)."""
    order = []
    for update in updates:
        if update.session_update == "tool_call":
            order.append(("tool_call", update.tool_call_id))
        elif update.session_update == "plan":
            order.append(("plan", "; ".join(f"{e.content}={e.status}" for e in update.entries)))
    return order


def finished(updates: list[Any]) -> dict[str, Any]:
    """Each call's completed update."""
    return {
        u.tool_call_id: u
        for u in updates
        if u.session_update == "tool_call_update" and u.status == "completed"
    }


def diffs_of(update: Any) -> list[tuple[str | None, str]]:
    return [(c.old_text, c.new_text) for c in update.content or () if c.type == "diff"]


async def test_diffs_and_the_plan_live_and_after_load(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "old.txt").write_text(OLD)
    new_old = OLD.replace("line 10\n", "line ten\n")
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "new.txt", "content": "a\nb\n"}, id="w_new")]),
        ToolCalls([Call("update_plan", {"plan": PLAN}, id="plan_1")]),
        ToolCalls([Call("read_file", {"path": "old.txt"}, id="r_old")]),  # read before a write
        ToolCalls([Call("write_file", {"path": "old.txt", "content": new_old}, id="w_old")]),
        Text("Both written."),
    )
    live = RecordingClient(answers=["allow_once", "allow_once"])
    environment = forge_environment(llm_server)
    async with forge_acp(live, environment, workspace=workspace) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await connection.prompt(session_id=sid, prompt=prompt_of("write them"))

    plan_text = "create new.txt=completed; edit old.txt=pending"
    expected = [
        ("tool_call", "w_new"),
        ("plan", plan_text),
        ("tool_call", "r_old"),
        ("tool_call", "w_old"),
    ]
    assert shown(live.updates) == expected  # the plan once, no "think" card for it
    ends = finished(live.updates)
    assert diffs_of(ends["w_new"]) == [("", "a\nb\n")]  # a new file: empty old text
    assert diffs_of(ends["w_old"]) == [(OLD, new_old)]  # one diff, the whole file
    assert [loc.line for loc in ends["w_old"].locations] == [9]  # line 10, zero-based
    # The approval question showed the same whole-file diff before the write.
    question = next(q for q, _ in live.questions if q.tool_call_id == "w_old")
    assert [(c.old_text, c.new_text) for c in question.content if c.type == "diff"] == [
        (OLD, new_old)
    ]

    loaded = RecordingClient()
    async with forge_acp(loaded, environment, workspace=workspace) as (connection, _):
        await connection.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])

    assert shown(loaded.updates) == expected  # the plan where it happened, once
    replayed = finished(loaded.updates)
    assert diffs_of(replayed["w_new"]) == [("", "a\nb\n")]
    assert diffs_of(replayed["w_old"]) == [(OLD, new_old)]
    assert [loc.line for loc in replayed["w_old"].locations] == [9]
