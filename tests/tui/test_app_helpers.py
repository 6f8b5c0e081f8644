"""Helpers shared by the TUI tests (this module holds no tests of its own)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from textual.message import Message
from textual.pilot import Pilot

from forge.config.store import ConfigStore
from forge.session.build import SessionOptions, build_session
from forge.tui.app import ForgeApp
from forge.tui.messages import EventMessage
from forge.tui.widgets.chat_blocks import NoticeBlock
from tests.support.openai_server import OpenAIServer

DEADLINE_SECONDS = 20.0
"""How long a test waits for the UI to reach a state before failing (generous for slow CI)."""


async def wait_until(
    pilot: Pilot[object],
    condition: Callable[[], object],
    what: str,
    *,
    deadline: float = DEADLINE_SECONDS,
) -> None:
    """Let the app run until `condition()` is truthy; fail naming `what` after `deadline`."""
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def configure(
    llm_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    *,
    api_key: str = "sk-test-key",
    config: dict[str, Any] | None = None,
) -> ConfigStore:
    """Point Forge at the loopback server (through the environment, as a user would) and
    write `config` as the YAML config file; returns the store the app reads."""
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    if api_key:
        monkeypatch.setenv("OPENAI_API_KEY", api_key)
    store = ConfigStore()
    if config:
        store.path.parent.mkdir(parents=True, exist_ok=True)
        store.path.write_text(yaml.safe_dump(config), encoding="utf-8")
        store.load()
    return store


def make_app(store: ConfigStore, workspace: Path, *, resume_latest: bool = False) -> ForgeApp:
    """The real app over a real runtime built from `store`'s settings."""
    session = build_session(
        store.current.settings, workspace, SessionOptions(resume_latest=resume_latest)
    )
    return ForgeApp(session=session, store=store, workspace=workspace)


async def submit(pilot: Pilot[object], text: str) -> None:
    """Type `text` into the prompt, press Enter, and wait until the app has handled it (the
    command ran, the message was queued, or the turn started).

    `pilot.press` only waits for the process to look idle (CPU time against wall time), which
    a loaded machine fakes; waiting on the app's own count is what makes the next step safe.
    """
    app = pilot.app
    assert isinstance(app, ForgeApp)
    handled = app.inputs_handled
    app.prompt.focus()
    await pilot.press(*text)
    await pilot.press("enter")
    await wait_until(pilot, lambda: app.inputs_handled > handled, f"the app to handle {text!r}")


async def wait_idle(pilot: Pilot[object], what: str = "the turn to end") -> None:
    """Wait until no turn runs and every posted message was handled."""
    app = pilot.app
    assert isinstance(app, ForgeApp)
    await wait_until(pilot, lambda: not app.busy, what)
    await pilot.pause()


def events_of(seen: list[Message], kind: type[Any]) -> list[Any]:
    """The agent events of type `kind` the widgets received, in order (each once, though
    every region that shows an event gets its own message)."""
    found: dict[int, Any] = {}
    for message in seen:
        if isinstance(message, EventMessage) and isinstance(message.event, kind):
            found.setdefault(id(message.event), message.event)
    return list(found.values())


def notices(app: ForgeApp) -> list[str]:
    """Text of every notice in the chat, oldest first."""
    return [block.text for block in app.chat.query(NoticeBlock)]


GATE_COMMAND = "sh gate.sh"
"""A command that prints "waiting" and then blocks until the test creates `release` in the
workspace: it holds a turn open deterministically, with the process idle."""
GATE_CONFIG: dict[str, Any] = {"tools": {"command_allowlist": [GATE_COMMAND]}}


def install_gate(workspace: Path) -> Path:
    """Write gate.sh into `workspace`; returns the file whose creation releases the gate."""
    (workspace / "gate.sh").write_text(
        "echo waiting\nwhile [ ! -e release ]; do sleep 0.02; done\necho released\n",
        encoding="utf-8",
    )
    return workspace / "release"
