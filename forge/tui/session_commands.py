"""/rename and /fork: the handlers, mixed into `SlashCommandRunner` (docs/adr/0058).

/rename records the name in the session file and asks the app to show it (`SessionRenamed`).
/fork writes a new session holding the conversation before a turn (or all of it) and switches
to it as /sessions does (`SessionResumeRequested`); the original file and the workspace's
files are untouched.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forge.tui.command_host import CommandHost


class SessionCommands:
    """`command_rename` and `command_fork` for `SlashCommandRunner`."""

    if TYPE_CHECKING:
        app: CommandHost

        async def _refuse_if_busy(self) -> bool: ...

    async def command_rename(self, argument: str) -> None:
        """Name this session `argument`."""
        from forge.tui.messages import SessionRenamed

        name = " ".join(argument.split())
        if not name:
            await self.app.chat.add_notice("Usage: `/rename NAME`.", kind="error")
            return
        self.app.runtime.rename(name)
        self.app.post_message(SessionRenamed())
        await self.app.chat.add_notice(f"This session is now named “{name}”.")

    async def command_fork(self, argument: str) -> None:
        """Continue in a new session holding the conversation before turn `argument` (as
        /rewind numbers them), or all of it."""
        from forge.agent.session_fork import fork_session
        from forge.agent.sessions import SessionStore
        from forge.tui.messages import SessionResumeRequested

        if await self._refuse_if_busy():
            return
        runtime = self.app.runtime
        text = argument.strip()
        if text and not text.isdigit():
            await self.app.chat.add_notice("Usage: `/fork [TURN]` (a turn number).", kind="error")
            return
        if not runtime.log.started:
            await self.app.chat.add_notice("Nothing to fork yet: this session has no turn.")
            return
        parent = runtime.session_id
        try:
            fork_id = await asyncio.to_thread(
                fork_session, SessionStore(), parent, int(text) if text else None
            )
        except (ValueError, LookupError, OSError) as error:
            await self.app.chat.add_notice(f"Cannot fork: {error}.", kind="error")
            return
        where = f"before turn {text}" if text else "with the whole conversation"
        await self.app.chat.add_notice(
            f"Forked session `{parent}` {where} into `{fork_id}`; the original is unchanged."
        )
        self.app.post_message(SessionResumeRequested(fork_id))
