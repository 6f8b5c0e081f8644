"""`/mcp` and `/context` in the real app, with a real stdio MCP server from the config: the
server starts with the app (before any turn), `/mcp` lists it with its tools, `/context`
shows its definitions' tokens."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from forge.agent.mcp import ServerState
from tests.mcp.conftest import SERVER_SCRIPT, alive, started_pids
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    configure,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)


async def test_mcp_lists_servers_and_context_shows_their_tokens(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    config = {
        "mcp_servers": {
            "tools": {"command": sys.executable, "args": [str(SERVER_SCRIPT), "stdio"]},
            "off": {"command": sys.executable, "args": ["-c", "pass"], "enabled": False},
        }
    }
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        mcp = app.session.servers.mcp
        assert mcp is not None
        await wait_until(
            pilot,
            lambda: all(c.state is not ServerState.STARTING for c in mcp.connections),
            "the MCP server to start without a turn",
        )
        await submit(pilot, "/mcp")
        await wait_until(pilot, lambda: any("MCP servers" in n for n in notices(app)), "/mcp")
        report = next(n for n in notices(app) if "MCP servers" in n)
        assert "tools: ready (10 tools)" in report.replace("`", "")
        assert "tools__echo" in report and "off: disabled" in report.replace("`", "")
        await submit(pilot, "/context")
        await wait_until(
            pilot, lambda: any("MCP tool definitions" in n for n in notices(app)), "/context"
        )
        context = next(n for n in notices(app) if "MCP tool definitions" in n)
        assert "tools" in context
    assert llm_server.requests == []


async def test_a_failing_server_is_told_in_the_chat_and_config_edits_apply_live(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, tmp_path: Path
) -> None:
    log = str(tmp_path / "first.log")
    first = {
        "command": sys.executable,
        "args": [str(SERVER_SCRIPT), "stdio"],
        "env": {"FORGE_TEST_START_LOG": log},
    }
    config = {"mcp_servers": {"github": {"command": "npx-not-installed"}, "first": first}}
    store = configure(llm_server, monkeypatch, config=config)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        mcp = app.session.servers.mcp
        assert mcp is not None
        failed = (
            "MCP server github failed to start: command not found 'npx-not-installed'. "
            "Its tools are unavailable; see /mcp."
        )
        await wait_until(pilot, lambda: failed in notices(app), "the failure notice")
        await wait_until(pilot, lambda: len(started_pids(Path(log))) == 1, "first to start")
        await wait_until(
            pilot, lambda: "first__echo" in app.session.registry.names(), "first's tools"
        )
        # An outside edit: `first` removed, `second` added, `github` switched off, and
        # `broken` added with a command that does not exist.
        second = {**first, "env": {"FORGE_TEST_START_LOG": str(tmp_path / "second.log")}}
        edited = {
            "mcp_servers": {
                "github": {"command": "npx-not-installed", "enabled": False},
                "second": second,
                "broken": {"command": "mcp-broken-command"},
            }
        }
        # Each server once, with its real state (issue 18 item 7).
        reloaded = (
            "MCP servers reloaded: started second; stopped first; broken failed to start: "
            "command not found 'mcp-broken-command'. A server that failed has no tools; "
            "see /mcp."
        )
        for attempt in range(10):
            # The watcher starts in a worker; an edit made before it watches would be missed.
            store.path.write_text(yaml.safe_dump(edited) + f"# edit {attempt}\n", "utf-8")
            try:
                await wait_until(pilot, lambda: reloaded in notices(app), "reload", deadline=3)
                break
            except AssertionError:
                continue
        assert reloaded in notices(app)
        await pilot.pause()
        assert [n for n in notices(app) if "broken" in n] == [reloaded], "told once"
        await wait_until(
            pilot, lambda: "second__echo" in app.session.registry.names(), "second's tools"
        )
        assert "first__echo" not in app.session.registry.names()
        assert not alive(started_pids(Path(log))[0])
        assert mcp.statuses()["github"].startswith("disabled")
    assert llm_server.requests == []


async def test_the_approval_dialog_of_an_mcp_call_shows_every_argument(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    from textual.widgets import Static

    from forge.tui.screens.approval import ApprovalScreen

    config = {
        "mcp_servers": {"tools": {"command": sys.executable, "args": [str(SERVER_SCRIPT), "stdio"]}}
    }
    llm_server.enqueue(ToolCalls([Call("tools__add", {"a": 17, "b": 25})]), Text("42"))
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        mcp = app.session.servers.mcp
        assert mcp is not None
        await wait_until(
            pilot,
            lambda: all(c.state is ServerState.READY for c in mcp.connections),
            "the MCP server",
        )
        await submit(pilot, "add them")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        shown = str(app.screen.query_one(".command-preview", Static).render())
        assert '"a": 17' in shown and '"b": 25' in shown
        await pilot.press("y")
        await wait_idle(pilot)
