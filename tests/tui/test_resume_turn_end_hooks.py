"""Hook cards that did not block are recorded, so a reopened session shows them as the live one
did (issue 35, docs/adr/0048): SessionStart's card before the first prompt, a Stop hook that
lets the turn end and the Notification hook after the answer. The live chat at 80 by 24 cells
and the chat reopened with `--continue` are compared block by block."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from forge.tui.widgets.hook_notice import HookNoticeBlock
from tests.agent.hooks.support import command_hook
from tests.agent.hooks.turns_support import emit_json
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until
from tests.tui.test_resume_children_hooks import rows

SIZE = (80, 24)

STARTED = """import json, sys
source = json.load(sys.stdin)["source"]
print(json.dumps({"systemMessage": "session started: " + source}))
"""


def hooks_config(workspace: Path) -> dict[str, object]:
    script = workspace.parent / "session_start.py"
    script.write_text(STARTED, encoding="utf-8")
    return {
        "SessionStart": [command_hook(f"{sys.executable} {script}")],
        "Stop": [command_hook(emit_json({"systemMessage": "stop check passed"}))],
        "Notification": [command_hook("echo turn over")],
    }


async def test_session_start_stop_and_notification_cards_read_the_same_resumed(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("First answer."), Text("Second answer."))
    config = {"llm": {"model": "gpt-4o"}, "hooks": hooks_config(workspace)}
    store = configure(llm_server, monkeypatch, config=config)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(app.chat.query(HookNoticeBlock)), "SessionStart")
        await submit(pilot, "hi")
        await wait_idle(pilot)
        await submit(pilot, "again")
        await wait_idle(pilot)
        live = rows(app)

    assert [line.split(" — ")[0] for line in live] == [
        "hook[output]: SessionStart hook",
        "user: hi",
        "answer: First answer. | thinking: ",
        "hook[output]: Stop hook",
        "hook[output]: Notification hook",
        "user: again",
        "answer: Second answer. | thinking: ",
        "hook[output]: Stop hook",
        "hook[output]: Notification hook",
    ]
    assert "session started: startup" in live[0]

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot,
            lambda: any("session started: resume" in line for line in rows(resumed)),
            "the history and this start's card",
        )
        shown = rows(resumed)
    assert shown[:-1] == live
    assert "session started: resume" in shown[-1]
