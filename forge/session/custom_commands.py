"""The user's own slash commands as the front ends offer them (docs/adr/0059 Part 5): the
Markdown command files of the workspace and the user (`.forge/commands/`), loaded and looked up.

Reading a file stays in `forge.agent.input.custom_commands` (skills build on it too); which
files are read, under which bound, is `read_custom_commands`, the one call of the TUI's
`/help` and completion, `forge run`'s `/name` prompt and the editor's command list.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from forge.agent.input.custom_commands import CustomCommand, CustomCommands, load_custom_commands

if TYPE_CHECKING:  # the settings (pydantic) stay out of the TUI's start-up imports
    from forge.config.settings import Settings

__all__ = ["CustomCommand", "CustomCommands", "read_custom_commands"]


def read_custom_commands(
    workspace: Path, settings: Settings, *, reserved: Iterable[str] = ()
) -> CustomCommands:
    """The project's and the user's command files as `settings` bound them
    (`commands.max_file_bytes`); a name in `reserved` (the front end's built-in commands) is
    skipped and reported, as is a file that cannot be used. Never raises."""
    return load_custom_commands(
        workspace, reserved=reserved, max_file_bytes=settings.commands.max_file_bytes
    )
