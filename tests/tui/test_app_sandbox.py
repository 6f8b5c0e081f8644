"""The sandbox in the TUI (docs/adr/0053): the status pane's line, `/sandbox`, and a model's
request to run unconfined, asked with its reason even in accept-edits with the tool
auto-approved; "always" is not offered, and the approved command reaches the host."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from textual.widgets import Static

from forge.tui.screens.approval import ApprovalScreen
from forge.tui.widgets.sandbox_view import SandboxView
from tests.agent.sandbox.support import needs_bubblewrap
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_until

SIZE = (120, 40)
pytestmark = needs_bubblewrap


async def test_the_status_pane_and_the_sandbox_command_say_what_confines_commands(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        line = app.query_one(SandboxView)
        await wait_until(pilot, lambda: line.text == "sandbox on · no net", "the sandbox line")
        assert not line.has_class("-unconfined")
        await submit(pilot, "/sandbox")
        await wait_until(pilot, lambda: any("Sandbox: on" in n for n in notices(app)), "/sandbox")
        text = next(n for n in notices(app) if "Sandbox: on" in n)
        assert "bubblewrap" in text and "network: none" in text
        assert "unreadable: ~/.ssh" in text
    assert not llm_server.requests


async def test_an_unconfined_request_asks_with_its_reason_and_then_reaches_the_host(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    host = socket.socket()
    host.bind(("127.0.0.1", 0))
    host.listen()
    port = host.getsockname()[1]
    command = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port})); "
        "open('reached.txt', 'w').write('yes')\""
    )
    config = {"tools": {"mode": "accept-edits", "auto_approve": ["execute_command"]}}
    llm_server.enqueue(
        ToolCalls(
            [
                Call(
                    "execute_command",
                    {"command": command, "unconfined": True, "reason": "reach the test server"},
                )
            ]
        ),
        Text("done"),
    )
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "connect")
            await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
            screen = app.screen
            text = "\n".join(str(widget.render()) for widget in screen.query(Static))
            assert "runs outside the sandbox" in text
            assert "reach the test server" in text
            assert not screen.query("#approve-always")
            await pilot.press("y")
            await wait_until(pilot, lambda: (workspace / "reached.txt").exists(), "the command")
    finally:
        host.close()
