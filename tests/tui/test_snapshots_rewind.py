"""The /rewind list at 80x24: each turn's first words, the files it changed, and a mark on the
turns that ran commands (which cannot be undone); the newest turn highlighted, the key line in
view. Update after an intended visual change with
`pytest tests/tui/test_snapshots_rewind.py --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import OptionList

from forge.session.restore import RewindPoint
from forge.tui.screens.rewind import RewindScreen
from tests.tui.test_snapshots_small import DialogHost, _steady, fully_visible

SIZE = (80, 24)
SnapCompare = Callable[..., bool]


def rows() -> list[RewindPoint]:
    def turn(
        number: int,
        text: str,
        files: tuple[str, ...] = (),
        note: str = "",
        *,
        commands: bool = False,
        present: bool = True,
    ) -> RewindPoint:
        return RewindPoint(f"msg_{number}", text, commands, present, files, note)

    return [
        turn(
            1,
            "Add a CSV export to the report module",
            ("src/report.py", "src/export.py", "tests/test_export.py", "README.md"),
            present=False,
        ),
        turn(2, "Run the test suite and fix what fails", ("src/export.py",), commands=True),
        turn(3, "Rename total to grand_total everywhere", ("src/report.py",), "files undone"),
        turn(4, "Why is the export slow on large files?"),
        turn(5, "Stream the rows instead of building a list", ("src/export.py",), commands=True),
    ]


def test_rewind_list_at_80x24(snap_compare: SnapCompare) -> None:
    app = DialogHost(lambda: RewindScreen(rows()))

    async def check(pilot: Pilot[None]) -> None:
        await _steady(pilot)
        screen = pilot.app.screen
        assert fully_visible(screen.query_one("#rewind-keys")), "the key line stays in view"
        assert screen.query_one("#rewind-turns", OptionList).highlighted == 4

    assert snap_compare(app, terminal_size=SIZE, run_before=check)


async def test_the_choice_and_conflict_dialogs_keep_their_buttons_in_view_at_80x24() -> None:
    from forge.tui.screens.restore_conflict import RestoreConflictScreen
    from forge.tui.screens.rewind import RewindModeScreen

    dialogs: list[tuple[Callable[[], object], tuple[str, ...]]] = [
        (lambda: RewindModeScreen(rows()[1]), ("#mode-both", "#mode-conversation", "#mode-files")),
        (
            lambda: RestoreConflictScreen(
                [f"src/module_{n}.py" for n in range(40)], "Undoing “add the parser”"
            ),
            ("#conflict-what", "#conflict-overwrite", "#conflict-keep", "#conflict-cancel"),
        ),
    ]
    many = [row for _ in range(8) for row in rows()]  # 40 turns: the list scrolls
    dialogs.append((lambda: RewindScreen(many), ("#rewind-keys", "#rewind-title")))
    for make, buttons in dialogs:
        app = DialogHost(make)
        async with app.run_test(size=SIZE) as pilot:
            await _steady(pilot)
            for button in buttons:
                assert fully_visible(app.screen.query_one(button)), button
