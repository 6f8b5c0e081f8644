"""/rename, /fork and /export: the handlers, mixed into `SlashCommandRunner` (docs/adr/0058).

/rename records the name in the session file and asks the app to show it (`SessionRenamed`).
/fork writes a new session holding the conversation before a turn (or all of it) and switches
to it as /sessions does (`SessionResumeRequested`); the original file and the workspace's
files are untouched.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from forge.session.saved_sessions import SessionStore

if TYPE_CHECKING:
    from forge.tui.command_host import CommandHost


class SessionCommands:
    """`command_rename`, `command_fork` and `command_export` for `SlashCommandRunner`."""

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
        self.app.session.history.rename(name)
        self.app.post_message(SessionRenamed())
        await self.app.chat.add_notice(f"This session is now named “{name}”.")

    async def command_fork(self, argument: str) -> None:
        """Continue in a new session holding the conversation before turn `argument` (as
        /rewind numbers them), or all of it."""
        from forge.session.saved_sessions import fork_session
        from forge.tui.messages import SessionResumeRequested

        if await self._refuse_if_busy():
            return
        session = self.app.session
        text = argument.strip()
        if text and not text.isdigit():
            await self.app.chat.add_notice("Usage: `/fork [TURN]` (a turn number).", kind="error")
            return
        if not session.log.started:
            await self.app.chat.add_notice("Nothing to fork yet: this session has no turn.")
            return
        parent = session.session_id
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

    async def command_export(self, argument: str) -> None:
        """Write this session as Markdown (or `html`, `json`) to PATH, or to
        `forge-session-ID.md` in the workspace; say where."""
        from forge.tui.transcript_export import FORMATS, export_session, export_target

        words = argument.split(maxsplit=1)
        fmt = "md"
        if words and words[0] in FORMATS:
            fmt, words = words[0], words[1:]
        session = self.app.session
        if not session.log.started:
            await self.app.chat.add_notice("Nothing to export yet: this session has no turn.")
            return
        workspace = self.app.workspace
        target = export_target(workspace, session.session_id, fmt, words[0] if words else "")
        try:
            text = await asyncio.to_thread(
                export_session, SessionStore(), workspace, session.session_id, fmt
            )
            await asyncio.to_thread(target.write_text, text, encoding="utf-8")
        except (ValueError, LookupError, OSError) as error:
            await self.app.chat.add_notice(f"Cannot export: {error}.", kind="error")
            return
        await self.app.chat.add_notice(f"Exported this session to `{target}`.")


def run_export_command(workspace: str, session_id: str, fmt: str, output: str | None) -> int:
    """`forge export ID [--format md|json] [--output PATH]`: the session on stdout, or
    written to PATH (said on stderr). 0, or 1 with the reason on stderr."""
    from forge.config.errors import ConfigError
    from forge.config.secrets import remember_settings_secrets
    from forge.config.store import ConfigStore
    from forge.session.saved_sessions import SessionStore
    from forge.tui.transcript_export import export_session

    try:  # the configured keys are masked too, as in every file Forge writes
        current = ConfigStore().current
        remember_settings_secrets(current.settings, current.file_data)
    except ConfigError:
        pass  # a broken config file holds no key this process could know
    try:
        text = export_session(SessionStore(), workspace, session_id, fmt)
        if output is None:
            sys.stdout.write(text)
            return 0
        Path(output).expanduser().write_text(text, encoding="utf-8")
    except (ValueError, LookupError, OSError) as error:
        sys.stderr.write(f"forge export: {error}\n")
        return 1
    sys.stderr.write(f"forge export: wrote {output}\n")
    return 0
