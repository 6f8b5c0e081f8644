"""Snapshots at 80x24, the smallest common terminal: dialogs keep their buttons and key line
in view (long content scrolls instead), and the main screen's status pane narrows.

Each test also asserts the property itself (the buttons lie inside the screen), so a layout
regression fails with a reason, not only with a changed picture. Update after an intended
visual change with `pytest tests/tui/test_snapshots_small.py --snapshot-update`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.app import App
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input

from forge.agent.events import ApprovalRequested, QuestionAsked
from forge.config.store import ConfigStore
from forge.llm.messages import ToolCall
from forge.tui.screens.approval import ApprovalScreen
from forge.tui.screens.question import QuestionScreen
from forge.tui.settings import SettingsScreen
from tests.tui.test_snapshots_main import make_scene_app, working_scene
from tests.tui.test_snapshots_settings import config_file  # noqa: F401 (a fixture)

SIZE = (80, 24)
SnapCompare = Callable[..., bool]

LONG_DIFF = "--- a/src/report.py\n+++ b/src/report.py\n@@ -1,30 +1,30 @@\n" + "".join(
    f"-    total_{n} = sum(row.amount for row in rows)\n"
    f"+    total_{n} = sum(row.amount for row in rows if row.kept)\n"
    for n in range(30)
)


def fully_visible(widget: Widget) -> bool:
    """The widget lies entirely inside the screen and is not clipped by its dialog."""
    screen = Region(0, 0, *SIZE)
    return widget.region.area > 0 and screen.contains_region(widget.region)


class DialogHost(App[None]):
    """Pushes one dialog at start; its future is never answered (nothing waits on it)."""

    def __init__(self, make_dialog: Callable[[], object]) -> None:
        super().__init__()
        self.make_dialog = make_dialog

    def on_mount(self) -> None:
        self.push_screen(self.make_dialog())  # type: ignore[arg-type]


def approval_dialog() -> ApprovalScreen:
    call = ToolCall("call_1", "apply_diff", '{"path": "src/report.py"}')
    request = ApprovalRequested(call, "apply_diff src/report.py (1 block)", LONG_DIFF)
    return ApprovalScreen(request)


def question_dialog() -> QuestionScreen:
    question = (
        "The repository has **two** database configurations. Which one should the tests "
        "use from now on?"
    )
    return QuestionScreen(
        QuestionAsked(question, ("sqlite (fast)", "postgres (as in CI)", "ask me later"))
    )


async def _steady(pilot: Pilot[None]) -> None:
    await pilot.pause()
    while not getattr(pilot.app.screen, "built", True):  # the settings' later sections
        await pilot.pause(0.02)
    for field_input in pilot.app.screen.query(Input):
        field_input.cursor_blink = False
    await pilot.pause()


def test_approval_dialog_with_a_60_line_diff_keeps_its_buttons_visible(
    snap_compare: SnapCompare,
) -> None:
    app = DialogHost(approval_dialog)

    async def check(pilot: Pilot[None]) -> None:
        await _steady(pilot)
        screen = pilot.app.screen
        for button_id in ("#approve-once", "#approve-always", "#reject"):
            assert fully_visible(screen.query_one(button_id)), button_id
        preview = screen.query_one("#approval-preview")
        assert fully_visible(preview) and preview.max_scroll_y > 0, "the diff scrolls"

    assert snap_compare(app, terminal_size=SIZE, run_before=check)


def test_settings_overlay_keeps_its_key_line_visible(
    snap_compare: SnapCompare,
    config_file: Path,  # noqa: F811
) -> None:
    app = DialogHost(lambda: SettingsScreen(ConfigStore(config_file)))

    async def check(pilot: Pilot[None]) -> None:
        await _steady(pilot)
        assert fully_visible(pilot.app.screen.query_one("#settings-keys"))

    assert snap_compare(app, terminal_size=SIZE, run_before=check)


def test_question_dialog_keeps_its_answer_box_visible(snap_compare: SnapCompare) -> None:
    app = DialogHost(question_dialog)

    async def check(pilot: Pilot[None]) -> None:
        await _steady(pilot)
        assert fully_visible(pilot.app.screen.query_one("#question-answer"))

    assert snap_compare(app, terminal_size=SIZE, run_before=check)


def test_main_screen_mid_summarization_narrows_the_status_pane(
    snap_compare: SnapCompare, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_scene_app(isolated_environment, monkeypatch)

    async def scene(pilot: Pilot[object]) -> None:
        await working_scene(pilot)
        status = pilot.app.query_one("#status")
        assert status.region.width <= SIZE[0] // 3, "the chat keeps most of the width"
        await asyncio.sleep(0)

    assert snap_compare(app, terminal_size=SIZE, run_before=scene)


async def _write_settings_screenshot(destination: Path) -> None:
    """docs/screenshots/settings.svg: the main screen at 100x40 with /settings open."""
    import os
    import tempfile

    from forge.session.build import build_session
    from forge.tui.app import ForgeApp

    with tempfile.TemporaryDirectory() as temporary:
        home = Path(temporary)
        for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            os.environ[variable] = str(home / variable.lower())
        os.environ["HOME"] = str(home)
        from forge.config.paths import config_path

        path = config_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "llm:\n  model: qwen3-coder-30b\n  summarization_model: qwen3-4b-instruct\n"
            "  base_url: http://127.0.0.1:8080/v1\n  api_key: sk-snapshot-not-a-real-key-0000\n"
            "context:\n  max_tokens: 128000\n"
            "tools:\n  command_allowlist: [git status, git diff, pytest -q]\n",
            encoding="utf-8",
        )
        workspace = home / "projects" / "forge-demo"
        workspace.mkdir(parents=True)
        store = ConfigStore(path)
        app = ForgeApp(
            session=build_session(store.current.settings, workspace),
            store=store,
            workspace=workspace,
        )
        async with app.run_test(size=(100, 40)) as pilot:
            app.prompt.cursor_blink = False
            await pilot.press("f2")
            await pilot.pause(0.5)
            await _steady(pilot)  # type: ignore[arg-type]
            app.save_screenshot(filename=destination.name, path=str(destination.parent))


if __name__ == "__main__":
    import sys

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/screenshots/settings.svg")
    asyncio.run(_write_settings_screenshot(target))
    print(f"wrote {target}")
