"""The user's own slash commands as the front ends offer them (docs/adr/0059 Part 5): the
Markdown command files of the workspace and the user (`.forge/commands/`), loaded and looked up.

Reading the files stays in `forge.agent.input.custom_commands` (skills build on it too);
the TUI's `/help` and completion, `forge run`'s `/name` prompt and the editor's command list
name them through this module.
"""

from __future__ import annotations

from forge.agent.input.custom_commands import CustomCommand, CustomCommands, load_custom_commands

__all__ = ["CustomCommand", "CustomCommands", "load_custom_commands"]
