"""A saved conversation as the session updates `session/load` sends before it answers: the
user's messages, the answers and their reasoning, each tool call with its final status and
result and an edit's diff (kept in the session file up to `KEPT_DIFF_CHARS`), and each plan
where the model set it — what the editor needs to show the session as it was."""

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

from forge.acp.relay import CARDLESS_TOOLS
from forge.acp.updates import plan_update, tool_call_finished, tool_call_started
from forge.agent.message_meta import child_reason, is_stop_feedback, typed_text, without_figures
from forge.context.plan import PLAN_AFTER, plan_of_message
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
    pinned = next((m for m in messages if plan_of_message(m) is not None), None)
    plan = plan_of_message(pinned) if pinned is not None else None
    # The plan calls were folded into the one pinned plan (ADR 0028), which names the message
    # its call came after: the plan is shown there, once; at the end when that is gone.
    after = str(pinned.meta.get(PLAN_AFTER, "")) if pinned is not None else ""
    if after and not any(m.id == after for m in messages):
        after = ""
    for message in messages:
        if message.role == "system" or message is pinned:
            continue
        yield from _message_updates(message, calls, workspace, describe)
        if plan and message.id == after:
            yield plan_update(plan)
    if plan and not after:
        yield plan_update(plan)


def _message_updates(
    message: Message,
    calls: dict[str, ToolCall],
    workspace: Path,
    describe: Callable[[ToolCall], str],
) -> Iterator[ReplayUpdate]:
    if message.kind in (MessageKind.LEDGER, MessageKind.PLAN):
        return  # the work ledger is Forge's note in the prompt, not what anyone said
    if message.role == "user":
        if is_stop_feedback(message):
            return  # a Stop hook's words to the model, not the user's (docs/adr/0048)
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
            if call.name not in CARDLESS_TOOLS:
                yield tool_call_started(call, describe(call), workspace)
    elif message.role == "tool" and message.tool_call_id in calls:
        call = calls[message.tool_call_id]
        if call.name in CARDLESS_TOOLS:
            return  # an answer (its text follows) or a plan call not folded yet
        failed = bool(message.meta.get("cancelled") or message.meta.get("is_error"))
        failed = failed or child_reason(message) == "interrupted"  # a child stopped by Esc
        shown = without_figures(message.content) if message.meta.get("subagent") else None
        yield tool_call_finished(call, shown or message.content, failed, message.meta, workspace)


def _image_updates(message: Message) -> Iterator[UserMessageChunk]:
    """A user message's images as the editor sent them (an image block), or its attachment
    line when the bytes are gone (masked, or missing from the session's files; ADR 0055)."""
    for image in message.images:
        if image.loaded:
            data = base64.b64encode(image.data).decode("ascii")
            yield update_user_message(image_block(data, image.media_type))
        else:
            yield update_user_message_text(image.attachment_line())
