"""Two running `task` rows of one agent can be told apart at 80 by 24 cells (issue 35 tryout):
a running child's status ("execute_command · 1 turn · 209 tokens") is too long to share the
line with more than a stub of the prompt, so the row gives the prompt the first line and
wraps the status, instead of cutting both prompts to the same "reviewer: revie…"."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.tui.widgets.chat_blocks import ToolCallBlock
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    GATE_COMMAND,
    configure,
    install_gate,
    make_app,
    submit,
    wait_idle,
    wait_until,
)
from tests.tui.test_resume_children_hooks import CHILD, PARENT, write_agent

SIZE = (80, 24)


async def test_two_running_children_of_one_agent_show_their_prompts(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    release = install_gate(workspace)
    write_agent(workspace)
    prompts = ["review the parser for sleep bugs", "review the lexer for sleep bugs"]
    calls = [
        Call("task", {"agent": "helper", "prompt": p}, id=f"t{n}") for n, p in enumerate(prompts)
    ]
    llm_server.enqueue_for(PARENT, ToolCalls(calls), Text("Both reviewed."))
    gate = ToolCalls([Call("execute_command", {"command": GATE_COMMAND})])
    llm_server.enqueue_for(CHILD, gate, gate, Text("fine"), Text("fine"))
    config = {"llm": {"model": PARENT}, "tools": {"command_allowlist": [GATE_COMMAND]}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "review both")

        def running() -> list[ToolCallBlock]:
            rows = [b for b in app.chat.query(ToolCallBlock) if b.call.name == "task"]
            return rows if all("execute_command" in b.status_text for b in rows) else []

        await wait_until(pilot, lambda: len(running()) == 2, "both children's commands")
        await pilot.pause()
        titles = [block.title_text for block in running()]
        release.touch()
        await wait_idle(pilot)
    assert "parser" in titles[0] and "lexer" in titles[1], titles
    assert all(title.startswith("● task  helper: review the") for title in titles)
