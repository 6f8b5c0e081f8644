"""The trust dialog at 80 by 24 cells (issue 35): a long list scrolls with ↓ and PgDn from the start
(the buttons have the focus), "more below" says when some of it is out of sight, the closing
sentence can be reached, and a re-ask marks which definitions are new or changed. `/trust
revoke` and `forge trust --help` name servers, hooks and skills."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import Static

from forge.tui.app import ForgeApp
from forge.tui.screens.trust import MORE_BELOW, TrustScreen
from tests.support.openai_server import OpenAIServer
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_until

SIZE = (80, 24)


def write_servers(workspace: Path, servers: dict[str, str]) -> None:
    folder = workspace / ".forge"
    folder.mkdir(exist_ok=True)
    entries = {
        name: {"command": "sh", "args": ["-c", command]} for name, command in servers.items()
    }
    (folder / "mcp.yaml").write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")


def dialog(app: ForgeApp) -> TrustScreen:
    screen = app.screen
    assert isinstance(screen, TrustScreen)
    return screen


def on_screen(app: ForgeApp, selector: str) -> bool:
    """Whether the widget's last line is inside the dialog's visible text."""
    widget = dialog(app).query_one(selector, Static)
    body = dialog(app).query_one("#trust-body")
    return widget.region.bottom <= body.region.bottom and widget.region.height > 0


async def test_a_long_list_scrolls_from_the_start_and_says_more_below(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    write_servers(workspace, {f"server{n:02}": f"exit {n}" for n in range(30)})
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), "the dialog")
        # Its lines, not the frame it is pushed (composed a moment later under load).
        await wait_until(pilot, lambda: bool(app.screen.query("#trust-program-list")), "its list")
        await wait_until(pilot, lambda: dialog(app).more_below, "more below")
        more = dialog(app).query_one("#trust-more", Static)
        await wait_until(pilot, lambda: more.region.height == 1, "the line shown")
        assert str(more.render()) == MORE_BELOW
        assert not on_screen(app, "#trust-note")
        body = dialog(app).query_one("#trust-body")
        await pilot.press("down")
        await wait_until(pilot, lambda: body.scroll_y == 1, "one line down")
        for _ in range(10):
            await pilot.press("pagedown")
        await wait_until(pilot, lambda: not dialog(app).more_below, "the end")
        assert on_screen(app, "#trust-note"), "the closing sentence can be read"
        assert dialog(app).query_one("#trust").region.height > 0  # the answers stay
        await pilot.press("pageup")
        await wait_until(pilot, lambda: dialog(app).more_below, "more below again")


async def test_a_reask_marks_new_and_changed_definitions(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    write_servers(workspace, {"kept": "exit 0", "edited": "exit 1"})
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), "the dialog")
        # Its lines, not the frame it is pushed (composed a moment later under load).
        await wait_until(pilot, lambda: bool(app.screen.query("#trust-program-list")), "its list")
        first = str(dialog(app).query_one("#trust-program-list", Static).render())
        await pilot.press("t")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen), "trusted")
        await pilot.pause(0.5)  # the watch is registered
        write_servers(workspace, {"kept": "exit 0", "edited": "exit 2", "added": "exit 3"})
        await wait_until(
            pilot, lambda: isinstance(app.screen, TrustScreen), "the re-ask", deadline=30
        )
        await wait_until(pilot, lambda: bool(app.screen.query("#not_now")), "its buttons")
        listing = str(dialog(app).query_one("#trust-program-list", Static).render())
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen), "answered")
        await submit(pilot, "/trust revoke")
        await wait_until(pilot, lambda: any("Decision forgotten" in n for n in notices(app)), "it")
        revoked = next(n for n in notices(app) if "Decision forgotten" in n)
    assert "(new)" not in first and "(changed)" not in first
    assert "  (changed) edited: sh -c 'exit 2'" in listing
    assert "  (new) added: sh -c 'exit 3'" in listing
    assert "  kept: sh -c 'exit 0'" in listing
    assert "MCP servers" in revoked and "hooks" in revoked and "skills" in revoked


def test_forge_trust_help_names_servers_hooks_and_skills() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "forge", "trust", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    text = " ".join(done.stdout.split())
    assert "MCP servers" in text and "hooks" in text and "skills" in text
    assert ".claude/settings.json" in text
