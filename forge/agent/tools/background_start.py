"""`execute_command` with `background: true`: hand the prepared command to the session's
background commands and answer at once with its id (docs/adr/0057)."""

from __future__ import annotations

from pathlib import Path

from forge.agent.sandbox.sandbox import PreparedCommand
from forge.agent.tools.background import BackgroundLimitError
from forge.agent.tools.base import ToolContext, ToolError, ToolResult


def start_in_background(
    command: str, prepared: PreparedCommand, cwd: Path, context: ToolContext
) -> ToolResult:
    """Start `command`; the result names its id and how to read and stop it. `ToolError`
    where there are no background commands (a subagent, a `!` command), at the limit, or
    when it cannot start."""
    commands = context.background
    if commands is None:
        prepared.finish()
        raise ToolError("background commands are not available here; run it without background")
    try:
        entry = commands.start(command, prepared, cwd)
    except BackgroundLimitError as error:
        prepared.finish()
        raise ToolError(str(error)) from None
    except OSError as error:
        raise ToolError(f"cannot start {prepared.argv[0]}: {error.strerror}") from None
    limit = " until stopped or the session ends"
    if commands.timeout is not None:
        limit += f", at most {commands.timeout:g} s (tools.background_timeout)"
    return ToolResult(
        content=(
            f"Started background command {entry.id}; it runs{limit}. Read its output with "
            f'command_output(id: "{entry.id}"), end it with command_stop(id: "{entry.id}").'
        ),
        metadata={"background_id": entry.id, "background": True},
    )
