"""Agent events: what a client (TUI or headless) sees of a turn, and `AgentEvent`, the union of
every event a client can receive.

One class per idea, defined in the lowest layer that emits it (docs/adr/0013): the stream
events (`MessageDelta`, `ReasoningDelta`, `RetryScheduled`) come from `forge.llm.stream` and
reach the client as the very objects the provider yielded; the context events come from
`forge.context.events`; the turn-level events are defined here. All are re-exported, so a
client imports its whole vocabulary from this module.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from forge.context.events import (
    ContextEvent,
    ContextUsage,
    ContextWarning,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationProgress,
    SummarizationStarted,
    SummarizerDisabled,
    Trigger,
)
from forge.llm.messages import Message, ToolCall
from forge.llm.stream import (
    ClientStreamEvent,
    MessageDelta,
    ReasoningDelta,
    RetryScheduled,
    Usage,
)

__all__ = [
    "AgentEvent",
    "ApprovalDecision",
    "ApprovalRequested",
    "ApprovalVerdict",
    "AssistantMessageDone",
    "ClientStreamEvent",
    "ContextEvent",
    "ContextUsage",
    "ContextWarning",
    "ErrorEvent",
    "HookBlocked",
    "HookOutput",
    "HookWarning",
    "MessageDelta",
    "QuestionAsked",
    "ReasoningDelta",
    "RetryScheduled",
    "SteeringAdded",
    "SubagentEvent",
    "SummarizationCompleted",
    "SummarizationFailed",
    "SummarizationProgress",
    "SummarizationStarted",
    "SummarizerDisabled",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolOutputDelta",
    "Trigger",
    "TurnEvent",
    "TurnFinished",
    "UsageEvent",
]


@dataclass(frozen=True, slots=True)
class AssistantMessageDone:
    """The assistant message of one LLM call is complete (text and/or tool calls)."""

    message: Message


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """A tool call is about to run (after approval)."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class ToolOutputDelta:
    """Streamed output of a running tool (e.g. a command's stdout)."""

    call_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """A tool call produced its result (or error, or rejection)."""

    call: ToolCall
    result: str
    is_error: bool = False
    exit_code: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    """Tool-specific detail for display, e.g. {"diff": "..."} for edits."""


class ApprovalVerdict(StrEnum):
    """How the user answered an approval request."""

    APPROVE_ONCE = "approve_once"
    APPROVE_ALWAYS = "approve_always"
    """Approve this and every later call of this tool, for the session."""
    REJECT = "reject"


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    """The answer to an approval request."""

    verdict: ApprovalVerdict
    reason: str = ""
    unattended: bool = False
    """No one could be asked (a headless run): a rejection's result is `reason` itself, not
    "rejected by user: …", so the model is not told a person said no."""


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    """The agent waits for the client to approve or reject a tool call via `future`."""

    call: ToolCall
    summary: str
    """What would happen, in one readable line (the command, or the file to be edited)."""
    preview: str = ""
    """A diff preview for edits, or the full command."""
    protected: str = ""
    """Why the call always asks: it writes Forge's own configuration ("… changes what Forge
    runs"); "" for an ordinary request (docs/adr/0034)."""
    agent: str = ""
    """The subagent whose call this is ("" for the main agent's; docs/adr/0045)."""
    asked_by: str = ""
    """The PreToolUse hook that asked for this approval (`permissionDecision: "ask"`), which
    asks in every mode; "" when the mode or the policy asks (docs/adr/0048)."""
    ask_reason: str = ""
    """What that hook said (`permissionDecisionReason`)."""
    future: asyncio.Future[ApprovalDecision] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


@dataclass(frozen=True, slots=True)
class QuestionAsked:
    """`ask_question`: the agent waits for the user's answer via `future`."""

    question: str
    suggestions: tuple[str, ...] = ()
    future: asyncio.Future[str] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """Usage the server reported for one LLM call, plus the session total so far."""

    usage: Usage
    session_prompt_tokens: int
    session_completion_tokens: int


@dataclass(frozen=True, slots=True)
class UserMessageShortened:
    """The user's message was larger than its share of the window (`context.
    user_instruction_share`): it is kept whole in the session file and sent as its head and
    tail around a marker naming `recall_key` (issue 34, docs/adr/0047)."""

    recall_key: str
    characters: int
    kept_characters: int
    share_tokens: int

    @property
    def text(self) -> str:
        """The notice a front end shows."""
        return (
            f"Your message is {self.characters:,} characters, more than its share of the "
            f"context ({self.share_tokens:,} tokens): the model gets its first and last "
            f"{self.kept_characters // 2:,} characters, and can read the rest with recall "
            f"{self.recall_key}. The whole message is kept in the session."
        )


@dataclass(frozen=True, slots=True)
class SteeringAdded:
    """A message the user sent during the turn was added to it as a user message, after the
    running tool calls returned and before the next request (issue 40, docs/adr/0057):
    `message_id` is its id in the conversation, `text` what the user sent, verbatim."""

    message_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """Something went wrong; `fatal` means the turn ended because of it."""

    message: str
    kind: str
    fatal: bool = False


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """The turn ended. `reason`: completed (task_completion), answered (a plain answer or
    converse), error, max_turns, circuit_breaker; headless adds timeout."""

    reason: str
    final_text: str = ""


@dataclass(frozen=True, slots=True)
class HookOutput:
    """A hook that ran printed text for the user (plain stdout of an exit-0 hook, or its
    `systemMessage`; docs/adr/0043). Shown as plain text, never as markup."""

    event: str
    """The hook event ("PostToolUse", …)."""
    hook: str
    """The hook's name: the file that defines it and its command."""
    text: str


@dataclass(frozen=True, slots=True)
class HookBlocked:
    """A hook blocked something: a tool call (PreToolUse), the prompt (UserPromptSubmit), the
    end of the turn (Stop), or told the model after a call (PostToolUse); `reason` is what it
    said (its stderr for exit 2)."""

    event: str
    hook: str
    reason: str


HOOK_FILE_PROBLEM = "config"
"""The `event` of a `HookWarning` about a hooks file (a parse error, a bad entry), not a hook."""


@dataclass(frozen=True, slots=True)
class HookWarning:
    """A hook failed, timed out or could not start (the action went on), or a hooks file has a
    problem; `text` names the hook or the file."""

    event: str
    text: str


@dataclass(frozen=True, slots=True)
class SubagentEvent:
    """An event of a child agent that a `task` call runs (docs/adr/0045): `event` as the child
    made it, labelled with the child's `agent` name and the `task` call's `call_id`. A child's
    approval requests are not wrapped: they come as `ApprovalRequested` with `agent` set, so
    every client answers them as it answers the main agent's."""

    agent: str
    call_id: str
    event: AgentEvent


TurnEvent = (
    AssistantMessageDone
    | ToolCallStarted
    | ToolOutputDelta
    | ToolCallFinished
    | ApprovalRequested
    | QuestionAsked
    | UsageEvent
    | UserMessageShortened
    | SteeringAdded
    | ErrorEvent
    | TurnFinished
    | HookOutput
    | HookBlocked
    | HookWarning
    | SubagentEvent
)
"""The events the agent itself makes of a turn."""

AgentEvent = ClientStreamEvent | TurnEvent | ContextEvent
"""Every event a client can receive: the provider's stream events, the turn's, the context's."""
