"""A trusted workspace MCP server whose script changes while the TUI runs (issue 34): the
watcher sees the script, the running server stops at once, the trust dialog asks, and
*Trust* starts the new script — the real app, a real stdio MCP server from a workspace
script."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.tui.screens.trust import TrustScreen
from tests.acp.test_acp_changed_script import starts, trusted_workspace, write_server
from tests.mcp.conftest import alive
from tests.support.openai_server import OpenAIServer
from tests.tui.test_app_helpers import configure, make_app, wait_until
from tests.tui.test_app_trust import SIZE, dialog_text, wait_for_dialog


async def test_a_changed_server_script_stops_the_server_and_asks_again(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    trusted_workspace(workspace)
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(starts(workspace)) == 1, "the trusted server")
        assert not isinstance(app.screen, TrustScreen)
        ((_, first_pid),) = starts(workspace)
        await pilot.pause(1.0)  # the watcher is registered
        write_server(workspace, "v2")
        await wait_for_dialog(pilot, app)
        assert "changed since it was trusted" in dialog_text(app)
        await wait_until(pilot, lambda: not alive(first_pid), "the old server to stop")
        await pilot.pause(0.5)
        assert [version for version, _ in starts(workspace)] == ["v1"]
        await pilot.press("t")
        await wait_until(pilot, lambda: len(starts(workspace)) == 2, "the new server")
    assert [version for version, _ in starts(workspace)] == ["v1", "v2"]
