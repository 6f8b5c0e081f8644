"""A saved conversation as the session updates `session/load` sends before it answers: the
user's messages, the answers and their reasoning, each tool call with its final status and
result, and the latest plan — what the editor needs to show the session as it was."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from acp import (
    image_block,
    update_agent_message_text,
    update_agent_thought_text,
    update_user_message,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from forge.acp.updates import plan_update, tool_call_finished, tool_call_started
from forge.agent.message_meta import child_reason, is_stop_feedback, typed_text, without_figures
from forge.context.plan import plan_of_message
from forge.llm.messages import Message, MessageKind, ToolCall

ReplayUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
)

SUMMARY_NOTE = "[earlier conversation, summarized by Forge]\n"


def replay_updates(
    messages: Sequence[Message], workspace: Path, describe: Callable[[ToolCall], str]
) -> Iterator[ReplayUpdate]:
    """The updates that show `messages` (a resumed conversation) in order; `describe` gives
    a call's title (`Session.describe_call`)."""
    calls: dict[str, ToolCall] = {}
    latest_plan = None
    for message in messages:
        if message.role == "system":
            continue
        if (plan := plan_of_message(message)) is not None:
            latest_plan = plan
            continue
        if message.kind is MessageKind.LEDGER:
            continue  # the work ledger is Forge's note in the prompt, not what anyone said
        if message.role == "user":
            if is_stop_feedback(message):
                continue  # a Stop hook's words to the model, not the user's (docs/adr/0048)
            summary = message.kind is MessageKind.SUMMARY
            text = SUMMARY_NOTE + message.content if summary else typed_text(message)
            if text:
                yield update_user_message_text(text)
            yield from _image_updates(message)
        elif message.role == "assistant":
            if message.reasoning:
                yield update_agent_thought_text(message.reasoning)
            if message.content:
                yield update_agent_message_text(message.content)
            for call in message.tool_calls:
                calls[call.id] = call
                yield tool_call_started(call, describe(call), workspace)
        elif message.role == "tool" and message.tool_call_id in calls:
            call = calls[message.tool_call_id]
            failed = bool(message.meta.get("cancelled") or message.meta.get("is_error"))
            failed = failed or child_reason(message) == "interrupted"  # a child stopped by Esc
            shown = without_figures(message.content) if message.meta.get("subagent") else None
            yield tool_call_finished(call, shown or message.content, failed, {}, workspace)
    if latest_plan:
        yield plan_update(latest_plan)


def _image_updates(message: Message) -> Iterator[UserMessageChunk]:
    """A user message's images as the editor sent them (an image block), or its attachment
    line when the bytes are gone (masked, or missing from the session's files; ADR 0055)."""
    for image in message.images:
        if image.loaded:
            data = base64.b64encode(image.data).decode("ascii")
            yield update_user_message(image_block(data, image.media_type))
        else:
            yield update_user_message_text(image.attachment_line())
