"""Workspace trust in the real app (docs/adr/0034): a hostile `.forge/mcp.yaml` starts
nothing until the user answers the dialog that names its command; *Not now* skips it for
the session, *Trust* starts it, *Never for this folder* is remembered; a changed file (the
live watcher) asks again; `/trust` shows and changes the decision; a corrupt store is said in
the chat; a model's write to Forge's configuration asks in accept-edits and says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static

from forge.agent.trust import TrustStatus, WorkspaceTrust, trust_store_path
from forge.agent.trust.sources import workspace_sources
from forge.tui.app import ForgeApp
from forge.tui.screens.approval import ApprovalScreen
from forge.tui.screens.trust import TrustScreen
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_until

SIZE = (120, 40)


def hostile(workspace: Path, flag: str = "FLAG") -> None:
    (workspace / ".forge").mkdir(exist_ok=True)
    entry = {"command": "sh", "args": ["-c", f"echo ran > {flag}"], "startup_timeout": 5}
    (workspace / ".forge" / "mcp.yaml").write_text(json.dumps({"mcpServers": {"evil": entry}}))


def dialog_text(app: ForgeApp) -> str:
    screen = app.screen
    assert isinstance(screen, TrustScreen)
    return "\n".join(str(widget.render()) for widget in screen.query(Static))


async def wait_for_dialog(pilot, app: ForgeApp) -> None:  # type: ignore[no-untyped-def]
    await wait_until(
        pilot,
        lambda: isinstance(app.screen, TrustScreen) and app.screen.query("#trust-program-list"),
        "the trust dialog",
    )


async def test_not_now_starts_nothing_and_says_so(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    hostile(workspace)
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_dialog(pilot, app)
        text = dialog_text(app)
        assert "evil: sh -c 'echo ran > FLAG'" in text
        assert ".forge/mcp.yaml" in text
        await pilot.pause(0.5)
        assert not (workspace / "FLAG").exists()
        await pilot.press("n")
        await wait_until(
            pilot, lambda: any("Not used this session" in n for n in notices(app)), "notice"
        )
        await submit(pilot, "/mcp")
        await wait_until(pilot, lambda: any("MCP servers" in n for n in notices(app)), "/mcp")
        assert "not trusted" in notices(app)[-1]
        await pilot.pause(0.5)
    assert not (workspace / "FLAG").exists()
    # Nothing stored: the next start asks again.
    (source,) = workspace_sources(workspace)
    assert WorkspaceTrust(workspace).status(source) is TrustStatus.UNDECIDED


@pytest.mark.parametrize("mode", ["read-only", "ask", "accept-edits", "auto"])
async def test_no_mode_starts_an_untrusted_definition(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, mode: str
) -> None:
    hostile(workspace)
    app = make_app(configure(llm_server, monkeypatch, config={"tools": {"mode": mode}}), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_dialog(pilot, app)
        await wait_until(pilot, lambda: app.session_ready.is_set(), "the session")
        await pilot.pause(1.0)  # long enough for `sh` to have run, had it been started
        assert not (workspace / "FLAG").exists()
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.mcp_watch.trust.decisions == 1, "the answer")
    assert not (workspace / "FLAG").exists()


async def test_trust_starts_it_and_a_changed_file_asks_again(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    hostile(workspace)
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_dialog(pilot, app)
        await pilot.press("t")
        await wait_until(pilot, lambda: (workspace / "FLAG").exists(), "the server to run")
        assert any("Trusted this workspace" in n for n in notices(app))
        # The live watcher: a changed definition is not run before the user answers.
        hostile(workspace, flag="FLAG2")
        await wait_for_dialog(pilot, app)
        assert "echo ran > FLAG2" in dialog_text(app)
        assert "changed since it was trusted" in dialog_text(app)
        await pilot.pause(0.5)
        assert not (workspace / "FLAG2").exists()
        await pilot.press("t")
        await wait_until(pilot, lambda: (workspace / "FLAG2").exists(), "the changed server")


async def test_a_definition_appearing_while_running_asks(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session_ready.is_set(), "the session")
        await pilot.pause(1.0)  # the watcher is registered
        assert not isinstance(app.screen, TrustScreen)
        hostile(workspace)
        await wait_for_dialog(pilot, app)
        await pilot.pause(0.5)
        assert not (workspace / "FLAG").exists()
        await pilot.press("escape")  # Esc is Not now
        await wait_until(
            pilot, lambda: any("Not used this session" in n for n in notices(app)), "notice"
        )
    assert not (workspace / "FLAG").exists()


async def test_never_is_remembered_and_trust_command_changes_it(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    hostile(workspace)
    store = configure(llm_server, monkeypatch)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_dialog(pilot, app)
        await pilot.press("v")
        await wait_until(
            pilot, lambda: any("Never for this folder" in n for n in notices(app)), "notice"
        )
    assert not (workspace / "FLAG").exists()
    again = make_app(store, workspace)
    async with again.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot, lambda: any("Never for this folder" in n for n in notices(again)), "notice"
        )
        await pilot.pause(0.5)
        assert not isinstance(again.screen, TrustScreen)
        await submit(pilot, "/trust")
        await wait_for_dialog(pilot, again)
        status = next(n for n in notices(again) if n.startswith("Workspace trust for"))
        assert "never trusted" in status and "sh -c 'echo ran > FLAG'" in status
        await pilot.press("t")
        await wait_until(pilot, lambda: (workspace / "FLAG").exists(), "the server to run")
        await submit(pilot, "/trust revoke")
        await wait_until(
            pilot, lambda: any("Decision forgotten" in n for n in notices(again)), "revoke"
        )
    (source,) = workspace_sources(workspace)
    assert WorkspaceTrust(workspace).status(source) is TrustStatus.UNDECIDED


async def test_a_corrupt_store_is_said_and_the_dialog_still_asks(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    hostile(workspace)
    trust_store_path().parent.mkdir(parents=True, exist_ok=True)
    trust_store_path().write_text("{ torn")
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_dialog(pilot, app)
        assert any("trust store cannot be used" in n for n in notices(app))
        await pilot.press("t")
        await wait_until(pilot, lambda: (workspace / "FLAG").exists(), "the server to run")
    assert trust_store_path().with_name("trust.json.bad").read_text() == "{ torn"


async def test_a_protected_write_asks_in_accept_edits_and_says_why(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    config = {"tools": {"mode": "accept-edits", "auto_approve": ["write_file"]}}
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": ".claude/settings.json", "content": "{}"})]),
        Text("done"),
    )
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "configure")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval")
        screen = app.screen
        text = "\n".join(str(widget.render()) for widget in screen.query(Static))
        assert "Protected:" in text and "changes what Forge runs" in text
        assert not screen.query("#approve-always")
        await pilot.press("y")
        await wait_until(
            pilot, lambda: (workspace / ".claude" / "settings.json").exists(), "the write"
        )


async def test_not_now_holds_across_clear(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    hostile(workspace)
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_dialog(pilot, app)
        await pilot.press("n")
        await wait_until(pilot, lambda: app.mcp_watch.trust.decisions == 1, "the answer")
        await submit(pilot, "/clear")
        await wait_until(
            pilot, lambda: any("New session started" in n for n in notices(app)), "/clear"
        )
        await pilot.pause(1.0)
        assert not isinstance(app.screen, TrustScreen)
        assert app.session.servers.mcp is not None
        assert app.session.servers.mcp.untrusted == {"evil"}
    assert not (workspace / "FLAG").exists()


async def test_the_answers_stay_on_an_80_by_24_screen_however_long_the_list(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    from textual.geometry import Region
    from textual.widgets import Button

    (workspace / ".forge").mkdir()
    servers = {
        f"server{index}": {"command": "sh", "args": ["-c", "echo " + "x" * 120]}
        for index in range(15)
    }
    (workspace / ".forge" / "mcp.yaml").write_text(json.dumps({"mcpServers": servers}))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_dialog(pilot, app)
        await pilot.pause(0.3)
        for button in app.screen.query(Button):
            assert button.region.area > 0 and Region(0, 0, 80, 24).contains_region(button.region), (
                button.id
            )
        await pilot.press("n")
