"""/undo and /rewind: the handlers, mixed into `SlashCommandRunner`.

Both go through the session's history: `Session.history.plan_restore` plans putting files back
and names the files edited since Forge wrote them, which the user is asked about first
(`RestoreConflictScreen`); `Session.history.restore` applies the plan with the answer. /rewind
lists `Session.history.rewind_points` and can also take the conversation back
(`rewind_conversation`).
Dialog answers arrive in callbacks: a handler never waits on a dialog, which would hold the
app's message queue. See docs/adr/0027-checkpoints.md and docs/adr/0041.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # forge.session.restore pulls in the settings (pydantic): imported by the handlers, after
    # the first frame (tests/tui/test_startup.py).
    from forge.session.restore import PlannedRestore, RestoreResult, RewindPoint
    from forge.tui.command_host import CommandHost
    from forge.tui.screens.restore_conflict import ConflictAnswer
    from forge.tui.screens.rewind import RewindChoice

Finish = Callable[["RestoreResult | None"], Awaitable[None]]

NOTHING_TO_UNDO = (
    "Nothing to undo: no earlier turn changed files with write_file or apply_diff "
    "(shell commands cannot be undone)."
)


class CheckpointCommands:
    """`command_undo` and `command_rewind` for `SlashCommandRunner`."""

    if TYPE_CHECKING:
        app: CommandHost

        async def _refuse_if_busy(self) -> bool: ...

    async def command_undo(self, argument: str) -> None:
        """Restore every file the last turn that changed files changed."""
        if await self._refuse_if_busy():
            return
        planned = self.app.session.history.plan_restore()
        if planned is None:
            await self.app.chat.add_notice(NOTHING_TO_UNDO)
            return
        title = _short(planned.title)

        async def finish(result: RestoreResult | None) -> None:
            if result is None:
                await self.app.chat.add_notice("Undo cancelled: nothing was restored.")
                return
            note = " Commands that turn ran were not undone." if planned.ran_commands else ""
            await self.app.chat.add_notice(
                f"Undid the file changes of “{title}”. {result.text}{note}",
                kind="error" if result.failed else "info",
            )

        await self._restore(planned, finish, f"Undoing “{title}”")

    async def command_rewind(self, argument: str) -> None:
        """List the turns; go back to before the chosen one (files, conversation, or both)."""
        from forge.tui.screens.rewind import RewindScreen

        if await self._refuse_if_busy():
            return
        points = self.app.session.history.rewind_points()
        if not points:
            await self.app.chat.add_notice("Nothing to rewind: this session has no turns yet.")
            return

        async def chosen(choice: RewindChoice | None) -> None:
            if choice is not None:
                await self._rewind(choice, points)

        self.app.push_screen(RewindScreen(points), callback=chosen)

    async def _rewind(self, choice: RewindChoice, points: list[RewindPoint]) -> None:
        from forge.session.restore import RestoreResult
        from forge.tui.messages import ConversationRewound

        session = self.app.session
        later = points[points.index(choice.turn) :]
        commands = any(point.ran_commands for point in later)
        title = _short(choice.turn.title())

        async def finish(result: RestoreResult | None) -> None:
            if result is None:
                await self.app.chat.add_notice("Rewind cancelled: nothing was changed.")
                return
            parts = [f"Rewound to before “{title}”."]
            if choice.mode != "conversation":
                parts.append(result.text or "No file changes to restore.")
            if choice.mode != "files":
                parts.append(
                    "The conversation is back to that point; its message is in the prompt."
                )
            if commands:
                parts.append("Commands run since then were not undone.")
            notice, kind = " ".join(parts), "error" if result.failed else "info"
            if choice.mode == "files":
                await self.app.chat.add_notice(notice, kind=kind)
                return
            # The app shows the rewound conversation, then this line (`ConversationRewound`).
            session.history.rewind_conversation(choice.turn.id)
            self.app.post_message(ConversationRewound(choice.turn.text, notice, kind))

        planned = (
            None if choice.mode == "conversation" else session.history.plan_restore(choice.turn.id)
        )
        if planned is None:
            await finish(RestoreResult("", failed=False))
            return
        await self._restore(planned, finish, f"Rewinding to before “{title}”")

    async def _restore(self, planned: PlannedRestore, finish: Finish, what: str) -> None:
        """Apply `planned`, asking first if it would overwrite edits made since (the dialog
        says `what` is being done, naming the turn)."""
        from forge.tui.screens.restore_conflict import RestoreConflictScreen

        session = self.app.session
        if not planned.conflicts:
            await finish(session.history.restore(planned))
            return

        async def answered(answer: ConflictAnswer | None) -> None:
            if answer is None:
                await finish(None)
            else:
                overwrite = answer == "overwrite"
                await finish(session.history.restore(planned, overwrite_conflicts=overwrite))

        screen = RestoreConflictScreen(list(planned.conflicts), what)
        self.app.push_screen(screen, callback=answered)


def _short(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
