"""`!command`: the user's own shell command, run in the workspace without the model (ADR 0030).

It runs exactly as `execute_command` runs the model's commands (its own process group, the
configured timeout, head-and-tail output, nothing left running when it ends or is cancelled),
but it is the user's: no approval is asked. Its events are the tool-call events a client
already shows as a command block. With `tools.bang_to_conversation` (default on), the command
and its output are added to the conversation as a user-role observation, so the model sees
them next turn; the context manager counts, caps and masks it like any output.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncGenerator
from contextlib import aclosing
from pathlib import Path

from forge.agent.events import AgentEvent, ToolCallFinished, ToolCallStarted, ToolOutputDelta
from forge.agent.turn.event_pump import EventPump
from forge.context.conversation import Conversation
from forge.llm.messages import Message, MessageKind, ToolCall

PREFIX = "!"
USER_COMMAND_TOOL = "!"
"""The tool name of a user command's call, so clients can tell it from the model's calls."""
CALL_ID_PREFIX = "user-command-"


def shell_escape_command(text: str) -> str | None:
    """The command when `text` starts with "!" (its very first character), else None.

    The command may be empty ("!" alone): the caller says so rather than running nothing.
    A message that should start with "!" for the model can start with a space instead.
    """
    if not text.startswith(PREFIX):
        return None
    return text[len(PREFIX) :].strip()


def observation(command: str, output: str) -> Message:
    """The user-role note that tells the model what the user ran and saw."""
    content = (
        "I ran this shell command myself in the workspace (not a request; for your "
        f"information):\n$ {command}\n{output}"
    )
    return Message(
        role="user",
        content=content,
        kind=MessageKind.OBSERVATION,
        meta={"user_command": command},
    )


async def run_shell_escape(
    command: str,
    workspace: Path,
    *,
    command_timeout: float,
    conversation: Conversation | None = None,
) -> AsyncGenerator[AgentEvent, None]:
    """Run `command` like `execute_command` (no approval); yield `ToolCallStarted`, its
    streamed `ToolOutputDelta`s and `ToolCallFinished`. With `conversation`, the finished
    command is appended to it as an observation. Cancelling the consumer ends the command's
    whole process group and adds nothing to the conversation."""
    from forge.agent.tools.base import ToolContext, ToolError, ToolResult
    from forge.agent.tools.execute_command import ExecuteCommandArgs, ExecuteCommandTool

    call = ToolCall(
        id=f"{CALL_ID_PREFIX}{uuid.uuid4().hex[:12]}",
        name=USER_COMMAND_TOOL,
        arguments=json.dumps({"command": command}),
    )
    yield ToolCallStarted(call)
    pump: EventPump[AgentEvent] = EventPump()
    context = ToolContext(
        workspace=workspace,
        on_output=lambda text: pump.put(ToolOutputDelta(call.id, text)),
        command_timeout=command_timeout,
    )
    work = asyncio.ensure_future(
        ExecuteCommandTool().run(ExecuteCommandArgs(command=command), context)
    )
    async with aclosing(pump.while_running(work)) as events:
        async for event in events:
            yield event
    try:
        result = work.result()
    except ToolError as error:
        result = ToolResult(content=str(error), is_error=True)
    yield ToolCallFinished(
        call,
        result.content,
        is_error=result.is_error,
        exit_code=result.exit_code,
        metadata={**result.metadata, "user_command": True},
    )
    if conversation is not None:
        conversation.append(observation(command, result.content))
