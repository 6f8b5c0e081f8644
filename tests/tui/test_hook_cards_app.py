"""A hook's card names its script relative to the workspace, on few lines and with no
scrollbar of its own, at 80x24 (issue 35)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.tui.widgets.hook_notice import HookNoticeBlock
from tests.agent.hooks.support import command_hook
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle

SIZE = (80, 24)


async def test_a_hook_card_shows_the_script_relative_to_the_workspace(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    script = workspace / ".claude" / "hooks" / "no-writes.sh"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\necho 'no writes here' >&2\nexit 2\n")
    script.chmod(0o755)
    config = {"hooks": {"PreToolUse": [command_hook(str(script), "Write")]}}
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "a.txt", "content": "x"})]), Text("Okay.")
    )
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write a.txt")
        await wait_idle(pilot)
        [card] = app.chat.query(HookNoticeBlock)
        shown = str(card.render())
        assert ".claude/hooks/no-writes.sh" in shown
        assert str(workspace) not in shown
        assert "~/" in shown  # the user config that defines it, from the home directory
        assert card.size.height <= 4  # title and origin wrap once at most; the hook's words
        assert card.virtual_size.height <= card.size.height  # nothing to scroll
        assert not card.show_vertical_scrollbar and not card.show_horizontal_scrollbar
