"""Textual messages shared across the app: what the agent-turn worker posts to the UI.

The worker never touches a widget. It turns each agent event into one of these messages and
posts it to the app; the app's handlers route it to the widget that owns that region.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from forge.agent.events import AgentEvent, ApprovalRequested, QuestionAsked, RetryScheduled
from forge.tui.retry_notices import RetryNotice

if TYPE_CHECKING:
    from forge.config.store import ConfigStore
    from forge.session.core import Session


@dataclass
class AgentEventArrived(Message):
    """An agent or context event to render (deltas, tool calls, usage, summarization...)."""

    event: AgentEvent


@dataclass
class ApprovalNeeded(Message):
    """The agent waits on `request.future` until the user approves or rejects a tool call."""

    request: ApprovalRequested


@dataclass
class QuestionNeeded(Message):
    """The agent waits on `request.future` for the user's answer to `ask_question`."""

    request: QuestionAsked


@dataclass
class QuestionAnswered(Message):
    """The user answered the agent's question (shown in the chat as their message)."""

    answer: str


@dataclass
class TurnEnded(Message):
    """The worker's event stream ended: normally, by interruption, or by an exception.

    Always posted last for a turn (or a /compact run), so no panel is left spinning.
    `reason` is "completed", "cancelled" or "error"; `error` is readable text for "error".
    """

    reason: str
    error: str = ""


def message_for_event(event: AgentEvent) -> Message:
    """The Textual message that carries `event` to the app."""
    if isinstance(event, ApprovalRequested):
        return ApprovalNeeded(event)
    if isinstance(event, QuestionAsked):
        return QuestionNeeded(event)
    if isinstance(event, RetryScheduled):
        return RetryNotice(event)
    return AgentEventArrived(event)


@dataclass
class RuntimeLoaded(Message):
    """The start-up worker loaded the config and built the runtime (after the first frame)."""

    runtime: Session
    store: ConfigStore


@dataclass
class StartupFailed(Message):
    """The runtime could not be built (an unknown or malformed session id): Forge exits."""

    error: str
