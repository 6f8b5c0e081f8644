"""/undo and /rewind: the handlers, mixed into `SlashCommandRunner`.

Both restore files through the session's `CheckpointStore` and ask first when a file was edited
since Forge wrote it (`RestoreConflictScreen`); /rewind can also take the conversation back
through the session log (`forge.agent.rewind`). Dialog answers arrive in callbacks: a handler
never waits on a dialog, which would hold the app's message queue. See
docs/adr/0027-checkpoints.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # forge.agent.checkpoints and .rewind pull in the settings (pydantic): imported by the
    # handlers, after the first frame (tests/tui/test_startup.py).
    from forge.agent.checkpoints import CheckpointStore, RestoreOutcome, RestorePlan
    from forge.agent.rewind import SessionTurn
    from forge.session.core import Session
    from forge.tui.command_host import CommandHost
    from forge.tui.screens.restore_conflict import ConflictAnswer
    from forge.tui.screens.rewind import RewindChoice

Finish = Callable[["RestoreOutcome | None"], Awaitable[None]]

NOTHING_TO_UNDO = (
    "Nothing to undo: no earlier turn changed files with write_file or apply_diff "
    "(shell commands cannot be undone)."
)


def checkpoint_store(runtime: Session) -> CheckpointStore | None:
    """The session's checkpoint store, if it has one."""
    return runtime.checkpoints


class CheckpointCommands:
    """`command_undo` and `command_rewind` for `SlashCommandRunner`."""

    if TYPE_CHECKING:
        app: CommandHost

        async def _refuse_if_busy(self) -> bool: ...

    async def command_undo(self, argument: str) -> None:
        """Restore every file the last turn that changed files changed."""
        from forge.agent.checkpoints import describe_outcome

        if await self._refuse_if_busy():
            return
        store = checkpoint_store(self.app.runtime)
        plan = store.plan_undo() if store is not None else None
        if store is None or plan is None:
            await self.app.chat.add_notice(NOTHING_TO_UNDO)
            return
        title = plan.turns[0].title
        ran = _ran_commands(self.app.runtime, [plan.turns[0].turn])

        async def finish(outcome: RestoreOutcome | None) -> None:
            if outcome is None:
                await self.app.chat.add_notice("Undo cancelled: nothing was restored.")
                return
            note = " Commands that turn ran were not undone." if ran else ""
            await self.app.chat.add_notice(
                f"Undid the file changes of “{_short(title)}”. {describe_outcome(outcome)}{note}",
                kind="error" if outcome.failed else "info",
            )

        await self._restore(store, plan, finish, f"Undoing “{_short(title)}”")

    async def command_rewind(self, argument: str) -> None:
        """List the turns; go back to before the chosen one (files, conversation, or both)."""
        from forge.tui.screens.rewind import RewindScreen, rewind_rows

        if await self._refuse_if_busy():
            return
        runtime = self.app.runtime
        turns = runtime.turns()
        if not turns:
            await self.app.chat.add_notice("Nothing to rewind: this session has no turns yet.")
            return
        rows = rewind_rows(turns, checkpoint_store(runtime))

        async def chosen(choice: RewindChoice | None) -> None:
            if choice is not None:
                await self._rewind(choice, turns)

        self.app.push_screen(RewindScreen(rows), callback=chosen)

    async def _rewind(self, choice: RewindChoice, turns: list[SessionTurn]) -> None:
        from forge.agent.checkpoints import RestoreOutcome, describe_outcome

        runtime = self.app.runtime
        later = turns[turns.index(choice.turn) :]
        commands = any(turn.ran_commands for turn in later)
        store = checkpoint_store(runtime)
        title = _short(choice.turn.title())

        async def finish(outcome: RestoreOutcome | None) -> None:
            if outcome is None:
                await self.app.chat.add_notice("Rewind cancelled: nothing was changed.")
                return
            parts = [f"Rewound to before “{title}”."]
            if choice.mode != "conversation":
                parts.append(
                    describe_outcome(outcome, "created since then")
                    if outcome.restored or outcome.removed or outcome.failed or outcome.skipped
                    else "No file changes to restore."
                )
            if choice.mode != "files":
                await self._rewind_conversation(choice.turn)
                parts.append(
                    "The conversation is back to that point; its message is in the prompt."
                )
            if commands:
                parts.append("Commands run since then were not undone.")
            await self.app.chat.add_notice(
                " ".join(parts), kind="error" if outcome.failed else "info"
            )

        if choice.mode == "conversation" or store is None:
            await finish(RestoreOutcome())
            return
        plan = store.plan(store.turns_since(choice.turn.created))
        await self._restore(store, plan, finish, f"Rewinding to before “{title}”")

    async def _rewind_conversation(self, turn: SessionTurn) -> None:
        runtime = self.app.runtime
        runtime.rewind_conversation(turn.id)
        await self.app.chat.clear_chat()
        await self.app.chat.show_history(runtime.messages)
        host = self.app
        host.prompt.load_text(turn.text)
        host.prompt.move_cursor(host.prompt.document.end)
        host.refresh_context_gauge()

    async def _restore(
        self, store: CheckpointStore, plan: RestorePlan, finish: Finish, what: str
    ) -> None:
        """Apply `plan`, asking first if it would overwrite edits made since (the dialog says
        `what` is being done, naming the turn)."""
        from forge.tui.screens.restore_conflict import RestoreConflictScreen

        conflicts = [file.path for file in plan.conflicts]
        if not conflicts:
            await finish(store.apply(plan, overwrite_conflicts=False))
            return

        async def answered(answer: ConflictAnswer | None) -> None:
            if answer is None:
                await finish(None)
            else:
                await finish(store.apply(plan, overwrite_conflicts=answer == "overwrite"))

        self.app.push_screen(RestoreConflictScreen(conflicts, what), callback=answered)


def _ran_commands(runtime: Session, turn_ids: list[str]) -> bool:
    return any(t.ran_commands for t in runtime.turns() if t.id in turn_ids)


def _short(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
