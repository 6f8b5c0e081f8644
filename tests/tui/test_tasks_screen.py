"""`/tasks` (issue 40): the background commands with their state, runtime and last line;
Enter shows the highlighted one's live output, `s` stops it and everything it started; a
snapshot at 80x24; the status pane counts the running ones (docs/adr/0057). Real processes.

Update the snapshot after an intended visual change with `--snapshot-update`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Static

from forge.agent.sandbox.sandbox import PreparedCommand
from forge.agent.tools.background import BackgroundCommand, BackgroundCommands
from forge.agent.tools.process_groups import group_alive
from forge.tui.screens.tasks import TasksScreen, runtime_text
from forge.tui.widgets.background_view import BackgroundView, background_text

SIZE = (80, 24)
SnapCompare = Callable[..., bool]
SERVER = "echo 'Serving HTTP on 127.0.0.1 port 8000'; sleep 1000"


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within 30 s: {what}")
        time.sleep(0.05)


def start(commands: BackgroundCommands, command: str, workspace: Path) -> BackgroundCommand:
    prepared = PreparedCommand(["/bin/sh", "-c", command], {"PATH": "/usr/bin:/bin"})
    return commands.start(command, prepared, workspace)


@pytest.fixture
def commands(workspace: Path) -> Iterator[BackgroundCommands]:
    commands = BackgroundCommands()
    server = start(commands, SERVER, workspace)
    finished = start(commands, "echo 'tests: 41 passed, 1 failed'; exit 1", workspace)
    wait_until(lambda: not finished.running, "the test run ended")
    wait_until(lambda: server.last_lines(1) != [], "the server printed")
    yield commands
    commands.stop_all("exit")


class TasksHost(App[None]):
    def __init__(self, commands: BackgroundCommands) -> None:
        super().__init__()
        self.commands = commands

    def on_mount(self) -> None:
        self.push_screen(TasksScreen(self.commands))


def test_tasks_screen_at_80x24(
    snap_compare: SnapCompare, commands: BackgroundCommands, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The runtimes tick: the picture shows fixed ones (runtime_text has its own test).
    monkeypatch.setattr(BackgroundCommand, "runtime", property(lambda self: 125.0))

    async def show_output(pilot: Pilot[None]) -> None:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(TasksHost(commands), terminal_size=SIZE, run_before=show_output)


async def test_enter_shows_live_output_and_s_stops_the_command(
    commands: BackgroundCommands,
) -> None:
    server = commands.get("bg1")
    assert server is not None
    async with TasksHost(commands).run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, TasksScreen)
        output = screen.query_one("#tasks-output", Static)
        assert not output.display
        await pilot.press("enter")
        await pilot.pause()
        assert output.display and "Serving HTTP on 127.0.0.1 port 8000" in str(output.render())
        await pilot.press("s")
        await pilot.pause()
        assert not server.running and server.stopped_by == "stopped"
        assert not group_alive(server.process.pid)
        assert "stopped" in screen._rows[0]


def test_runtimes_and_the_status_line() -> None:
    assert [runtime_text(s) for s in (5, 125, 3725)] == ["5s", "2m05s", "1h02m"]
    assert background_text(0) == "" and background_text(2) == "background 2 running · /tasks"


async def test_the_status_line_shows_only_while_commands_run(
    commands: BackgroundCommands,
) -> None:
    class Host(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            view = BackgroundView(id="background")
            view.running_source = lambda: len(commands.running())
            yield view

    async with Host().run_test(size=SIZE) as pilot:
        view = pilot.app.query_one(BackgroundView)
        view.refresh_count()
        assert view.display and view.text == "background 1 running · /tasks"
        commands.stop_all("exit")
        view.refresh_count()
        assert not view.display
