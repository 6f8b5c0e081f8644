"""`command_output` and `command_stop`: the model reads and ends its background commands
(docs/adr/0057). Both need no approval: reading output changes nothing, and stopping only ends
what the model itself started (with the user's approval when it started it)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from forge.agent.tools.arguments import Integer, ModelTool, ToolArguments, tool_schema
from forge.agent.tools.background import BackgroundCommand, BackgroundCommands
from forge.agent.tools.base import ToolContext, ToolError, ToolResult
from forge.llm.protocols import ToolSpec

OUTPUT_LIMIT_CHARACTERS = 20_000
"""Characters of output one `command_output` call returns at most (head and tail kept)."""


class CommandOutputArgs(ToolArguments):
    """`command_output`'s arguments."""

    id: str = Field(description="The background command's id (from execute_command).")
    since: Integer | None = Field(
        default=None,
        description="Only output after this offset (the `next` of the previous call).",
    )


class CommandStopArgs(ToolArguments):
    """`command_stop`'s arguments."""

    id: str = Field(description="The background command's id.")


def _commands(context: ToolContext) -> BackgroundCommands:
    if context.background is None:
        raise ToolError("there are no background commands here")
    return context.background


def _unknown(commands: BackgroundCommands, command_id: str) -> ToolError:
    known = ", ".join(entry.id for entry in commands.all()) or "none"
    return ToolError(f"no background command {command_id!r} (known: {known})")


def status_line(entry: BackgroundCommand) -> str:
    """E.g. "[bg1 running for 12 s]" or "[bg1 exited with exit code 0 after 3 s]"."""
    seconds = f"{entry.runtime:.0f} s"
    if entry.running:
        return f"[{entry.id} running for {seconds}]"
    if entry.stopped_by:
        return f"[{entry.id} {entry.stopped_by} after {seconds} (exit code {entry.exit_code})]"
    return f"[{entry.id} exited with exit code {entry.exit_code} after {seconds}]"


class CommandOutputTool(ModelTool[CommandOutputArgs]):
    """What a background command printed, and whether it ended with which exit code."""

    spec = ToolSpec(
        name="command_output",
        description=(
            "Read a background command's output (started by execute_command with background: "
            "true): all of it, or with `since` only what came after that offset. Long output "
            "is cut to its head and tail. Says whether it still runs or its exit code."
        ),
        parameters=tool_schema(CommandOutputArgs),
    )
    arguments_model = CommandOutputArgs

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "command_output: bg1"."""
        return f"{self.name}: {arguments.get('id', '?')}"

    async def run(self, args: CommandOutputArgs, context: ToolContext) -> ToolResult:
        """The output from `since` (bounded), the status, and the offset to read from next."""
        commands = _commands(context)
        entry = commands.get(args.id)
        if entry is None:
            raise _unknown(commands, args.id)
        since = max(0, args.since or 0)
        piece = entry.output.read(since, OUTPUT_LIMIT_CHARACTERS)
        text = piece.text
        if text and not text.endswith("\n"):
            text += "\n"
        if not text:
            text = "(no new output)\n" if since else "(no output yet)\n"
        return ToolResult(
            content=f"{text}{status_line(entry)} [next: {piece.next_offset}]",
            exit_code=entry.exit_code,
            metadata={
                "background_id": entry.id,
                "running": entry.running,
                "next": piece.next_offset,
                "output_truncated": piece.elided,
            },
        )


class CommandStopTool(ModelTool[CommandStopArgs]):
    """Ends a background command and everything it started."""

    spec = ToolSpec(
        name="command_stop",
        description=(
            "Stop a background command and everything it started (SIGTERM, then SIGKILL). "
            "Returns its last output and exit code."
        ),
        parameters=tool_schema(CommandStopArgs),
    )
    arguments_model = CommandStopArgs

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "command_stop: bg1"."""
        return f"{self.name}: {arguments.get('id', '?')}"

    async def run(self, args: CommandStopArgs, context: ToolContext) -> ToolResult:
        """Stop it (off the event loop: the grace period blocks) and report how it ended."""
        commands = _commands(context)
        entry = commands.get(args.id)
        if entry is None:
            raise _unknown(commands, args.id)
        was_running = entry.running
        await asyncio.to_thread(commands.stop, entry.id)
        lines = "\n".join(entry.last_lines(5))
        prefix = "" if was_running else f"{entry.id} had already ended.\n"
        return ToolResult(
            content=f"{prefix}{lines + chr(10) if lines else ''}{status_line(entry)}",
            exit_code=entry.exit_code,
            metadata={"background_id": entry.id, "running": entry.running},
        )
