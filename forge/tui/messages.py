"""Textual messages shared across the app: what the agent-turn worker posts to the UI.

The worker never touches a widget. `forge.tui.event_dispatch` turns each agent event into one
of the typed messages below (one class per kind of event, carrying it, named after it:
`MessageDelta` → `MessageDeltaShown`; docs/adr/0059) and posts it to each widget that shows it;
that widget handles it with `@on` (docs/adr/0016). An event message
does not bubble: every region that shows an event gets its own copy. After the turn's last
event the worker posts `TurnOver` to the chat and the summarization panel; the chat, once it
has closed the turn, posts `TurnEnded` to the app, which therefore sees it only after the chat
has shown everything before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from textual.message import Message

from forge.agent.events import (
    ApprovalRequested,
    AssistantMessageDone,
    ContextUsage,
    ContextWarning,
    ErrorEvent,
    HookBlocked,
    HookOutput,
    HookWarning,
    MessageDelta,
    QuestionAsked,
    ReasoningDelta,
    SteeringAdded,
    SubagentEvent,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationProgress,
    SummarizationStarted,
    SummarizerDisabled,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
    TurnFinished,
    UsageEvent,
    UserMessageShortened,
)
from forge.session.events import AttachmentsAdded

E = TypeVar("E")


@dataclass
class EventMessage(Message, Generic[E]):
    """One agent or context event, delivered to one widget that shows it."""

    event: E

    def __init_subclass__(cls, bubble: bool | None = False, **kwargs: Any) -> None:
        # Each region gets its own copy; none goes on up to the app by the DOM.
        super().__init_subclass__(bubble=bubble, **kwargs)


class MessageDeltaShown(EventMessage[MessageDelta]):
    """Answer text streamed (joined into ~30 ms batches by `delta_batching`)."""


class SubagentEventShown(EventMessage[SubagentEvent]):
    """An event of a child agent a `task` call runs (docs/adr/0045)."""


class ReasoningDeltaShown(EventMessage[ReasoningDelta]):
    """Reasoning text streamed (batched like the answer)."""


class AssistantMessageDoneShown(EventMessage[AssistantMessageDone]):
    """The assistant's message is complete."""


class ToolCallStartedShown(EventMessage[ToolCallStarted]):
    """A tool call started running."""


class ToolOutputDeltaShown(EventMessage[ToolOutputDelta]):
    """A running tool call printed output."""


class ToolCallFinishedShown(EventMessage[ToolCallFinished]):
    """A tool call ended (its result, exit code, diff, plan)."""


class UsageEventShown(EventMessage[UsageEvent]):
    """A request reported its tokens (and the session's totals)."""


class ErrorEventShown(EventMessage[ErrorEvent]):
    """The turn hit an error the user must see."""


class TurnFinishedShown(EventMessage[TurnFinished]):
    """The agent ended the turn (answered, interrupted, a limit)."""


class ContextUsageShown(EventMessage[ContextUsage]):
    """The prompt's size against the budget."""


class SteeringAddedShown(EventMessage[SteeringAdded]):
    """A message the user steered into the running turn was added to the conversation."""


class UserMessageShortenedShown(EventMessage[UserMessageShortened]):
    """The user's message was larger than its share: its head and tail were sent."""


class ContextWarningShown(EventMessage[ContextWarning]):
    """The prompt crossed the warning threshold."""


class SummarizationStartedShown(EventMessage[SummarizationStarted]):
    """A summarization run started."""


class SummarizationProgressShown(EventMessage[SummarizationProgress]):
    """A summarization run finished one of its parts."""


class SummarizationCompletedShown(EventMessage[SummarizationCompleted]):
    """A summarization run (or a deterministic tier) shortened the context."""


class SummarizationFailedShown(EventMessage[SummarizationFailed]):
    """A summarization run failed or was skipped (and what fell back)."""


class SummarizerDisabledShown(EventMessage[SummarizerDisabled]):
    """A permanent error turned LLM summaries off for the session (ADR 0024)."""


class HookOutputShown(EventMessage[HookOutput]):
    """A hook printed text for the user (docs/adr/0043)."""


class HookBlockedShown(EventMessage[HookBlocked]):
    """A hook blocked a call, the prompt or the end of the turn."""


class HookWarningShown(EventMessage[HookWarning]):
    """A hook failed, timed out or could not start, or a hooks file has a problem."""


class AttachmentsAddedShown(EventMessage[AttachmentsAdded]):
    """The files a message's mentions attached, and the mentions that attached nothing."""


if TYPE_CHECKING:
    from forge.config.store import ConfigStore
    from forge.session.core import Session
    from forge.tui.widgets.chat_blocks import NoticeBlock


@dataclass
class ApprovalRequestedShown(Message):
    """The agent waits on `request.future` until the user approves or rejects a tool call."""

    request: ApprovalRequested


@dataclass
class QuestionAskedShown(Message):
    """The agent waits on `request.future` for the user's answer to `ask_question`."""

    request: QuestionAsked


@dataclass
class QuestionAnswered(Message):
    """The user answered the agent's question (shown in the chat as their message)."""

    answer: str


@dataclass
class TurnOver(Message, bubble=False):
    """The worker's event stream ended: normally, by interruption, or by an exception.

    Always posted last for a turn (or a /compact run), to the chat and the summarization
    panel, so no panel is left spinning. `reason` is "completed", "cancelled" or "error";
    `error` is readable text for "error".
    """

    reason: str
    error: str = ""


@dataclass
class TurnStarted(Message, bubble=False):
    """A turn for a new user message started (posted by the app to the summarization panel:
    the conversation moved on since the last run)."""


@dataclass
class TurnEnded(Message):
    """The turn (or /compact run) is over and the chat has closed it (posted by the chat on
    `TurnOver`, to the app: the next queued message may start)."""

    reason: str
    error: str = ""


@dataclass
class RequestResumed(Message):
    """An event arrived after a retry was announced: the request went through."""


@dataclass
class SessionLoaded(Message):
    """The start-up worker loaded the config and built the session (after the first frame)."""

    session: Session
    store: ConfigStore


@dataclass
class StartupFailed(Message):
    """The session could not be built (an unknown or malformed session id): Forge exits."""

    error: str


# --- what slash commands ask the app to do (docs/adr/0041's addendum) ---------------------------
# A command reads what it needs through `CommandHost` and posts one of these for a flow that
# belongs to the app; the app's flow mixins handle each with `@on`. They are posted to the app
# while it handles the prompt's input, so they run before the input counts as handled.


@dataclass
class NewSessionRequested(Message):
    """/clear: a fresh session (a new session file) and an empty chat."""


@dataclass
class SessionResumeRequested(Message):
    """/sessions ID: switch to the saved session `session_id`, its history shown."""

    session_id: str


@dataclass
class SessionRenamed(Message):
    """/rename: the session's name changed; the header shows it."""


@dataclass
class CompactionRequested(Message):
    """/compact: summarize now in the turn worker; `notice` is the chat line announcing it,
    closed with the outcome."""

    instructions: str
    notice: NoticeBlock


@dataclass
class UserMessageRequested(Message):
    """A custom command's or skill's expanded text, sent as the user's message (on `model`
    when given, for that turn only); the chat shows `typed`, the expansion folded under it."""

    text: str
    model: str = ""
    typed: str = ""
    """What the user typed (`/greet Alice`); "" when `text` is what they typed."""


@dataclass
class ModelSwitchRequested(Message):
    """/model NAME: the session's model from now on (the config file is not changed)."""

    model: str


@dataclass
class SkillsDisabledSaveRequested(Message):
    """/skills enable|disable or the /skills screen closed: save `skills.disabled` in the
    user config (atomic, 0600) and apply it; the chat then says `said` (docs/adr/0046)."""

    disabled: list[str]
    said: str


@dataclass
class SettingsRequested(Message):
    """/settings (or F2): open the settings overlay."""


@dataclass
class TrustRequested(Message):
    """/trust [revoke]: show the workspace's trust and ask to change it."""

    argument: str


@dataclass
class ConversationRewound(Message):
    """/rewind took the session's conversation back: show it, put the turn's text back in the
    prompt, then say what happened (`notice`, of `kind`)."""

    prompt_text: str
    notice: str
    kind: str = "info"


@dataclass
class QuitRequested(Message):
    """/quit: exit Forge."""


@dataclass
class InputHandled(Message):
    """Posted by the app to itself after a prompt submission, behind any flow its command
    asked for: counts the submission as fully handled (`ForgeApp.inputs_handled`)."""
