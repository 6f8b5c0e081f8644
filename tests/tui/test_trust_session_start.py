"""A workspace trusted at its first start runs its SessionStart hooks then (issue 35 tryout):
the project's hooks were not trusted when the session started, so *Trust* used to load them
without running SessionStart until the next start. Now the dialog's *Trust*, before the first
prompt, runs the project's SessionStart hooks (the user's, which already ran, not again): their
card shows at 80 by 24 cells and their context goes with the first prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge.tui.screens.trust import TrustScreen
from forge.tui.widgets.hook_notice import HookNoticeBlock
from tests.agent.hooks.support import command_hook
from tests.agent.hooks.turns_support import emit_json
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until

SIZE = (80, 24)


async def test_trust_at_the_first_start_runs_the_projects_session_start_hooks(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    project = {
        "systemMessage": "project hooks ready",
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "The project uses tabs.",
        },
    }
    (workspace / ".forge").mkdir()
    hooks = {"SessionStart": [command_hook(emit_json(project))]}
    (workspace / ".forge" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    runs = workspace.parent / "user-session-start-runs"
    user = {"SessionStart": [command_hook(f"echo ran >> {runs}")]}
    llm_server.enqueue(Text("ok"))
    app = make_app(configure(llm_server, monkeypatch, config={"hooks": user}), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), "the dialog")
        await wait_until(pilot, lambda: bool(app.screen.query("#trust")), "its buttons")
        await pilot.press("t")
        await wait_until(
            pilot,
            lambda: any("project hooks ready" in c.text for c in app.chat.query(HookNoticeBlock)),
            "the project's SessionStart card",
        )
        await submit(pilot, "hello")
        await wait_idle(pilot)
    sent = llm_server.requests[-1].messages[-1]["content"]
    assert "The project uses tabs." in sent
    assert runs.read_text().splitlines() == ["ran"], "the user's SessionStart ran once"
