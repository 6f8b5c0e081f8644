"""What a resumed conversation shows: the chat's rows, derived from the recorded messages.

The live chat renders a turn from its events; a resumed one has only the session's messages
(docs/adr/0032). `history_rows` turns those into the rows the live chat showed, so reopening a
session tells the same story: a `task_completion` or `converse` result is the answer (not a
tool row), an `ask_question` is the question and the user's reply, a call cut short by the
user reads "interrupted" (calls that never started are not shown, as they were not live), and
a note follows a turn only where the live chat had one: "Interrupted: …" where the user stopped
it, a "no answer" note where it ended without the model's answer. No widgets are built
here (`forge.tui.widgets.history_blocks` builds them), so every rule has a plain unit test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from forge.agent.events import HookBlocked
from forge.agent.message_meta import (
    CHILD_CALLS_KEY,
    CHILD_REASON_KEY,
    EXPANSION_KEY,
    HOOK_CONTEXT_MARK,
    STOP_FEEDBACK_PREFIX,
    TYPED_KEY,
    HookNotice,
    child_calls,
    is_stop_feedback,
    recorded_notices,
    without_figures,
)
from forge.llm.messages import Message, MessageKind, ToolCall

LOOP_BREAKING_TOOLS = frozenset({"converse", "task_completion", "ask_question"})
"""Tools that talk to the user: shown as answers and questions, not as tool rows."""
ANSWER_TOOLS = frozenset({"converse", "task_completion"})
"""Loop-breaking tools whose result is the turn's answer."""
SUMMARY_KINDS = (MessageKind.SUMMARY, MessageKind.GOAL_BATCH, MessageKind.PRUNED)
SUMMARY_LABELS = {
    MessageKind.SUMMARY: "Summary",
    MessageKind.GOAL_BATCH: "Goal batch",
    MessageKind.PRUNED: "Pruned",
}

INTERRUPTED_NOTE = "[interrupted by the user]"
"""Ends a partial answer the user cut off (`forge.agent.turn.interruption.INTERRUPTED_NOTE`)."""
SKIPPED_PREFIX = "[skipped"
"""A call the turn never reached because an earlier one ended it (`forge.agent.turn.loop`)."""
INTERRUPTED_TURN_NOTE = "Interrupted: you ended the turn before the model's answer."
"""The live chat's note under a turn the user stopped (`ChatView.end_turn`)."""
UNANSWERED_NOTICE = (
    "The last turn ended before the model's answer (interrupted, or stopped at a limit). "
    "Send a message to go on."
)
"""Under a resumed session whose last turn has no answer."""
UNANSWERED_TURN_NOTE = (
    "This turn ended before the model's answer (interrupted, or stopped by an error or a limit)."
)
"""Under an earlier turn that has no answer."""
CUT_OFF_NOTICE = (
    "**The previous turn was cut off**: Forge stopped while it ran. Calls without a result "
    "are marked cancelled, and the model has been told."
)
"""Where a resumed session's unfinished turn ended (`forge.agent.turn.interruption`)."""

TurnState = Literal["none", "unanswered", "answered", "interrupted"]


_PINNED = (MessageKind.PLAN, MessageKind.LEDGER)
"""Messages Forge pins in the prompt, not what anyone said (docs/adr/0028, 0050)."""


@dataclass(frozen=True)
class UserRow:
    """What the user typed (or answered to a question)."""

    text: str


@dataclass(frozen=True)
class ExpansionRow:
    """What a `/command` or skill the user typed sent to the model (shown folded)."""

    text: str


@dataclass(frozen=True)
class HookRow:
    """A hook's notice, as the live chat showed it (`agent`: the subagent whose call it was)."""

    notice: HookNotice
    agent: str = ""


@dataclass(frozen=True)
class AnswerRow:
    """The model's text: a plain reply, a partial one, or a `converse`/`task_completion`."""

    text: str
    reasoning: str = ""


@dataclass(frozen=True)
class ToolRow:
    """One tool call with the status the live chat ended on and its recorded output."""

    call: ToolCall
    status: str
    status_text: str
    output: str
    children: tuple[tuple[ToolCall, str], ...] = ()
    """A `task` call's child's tool calls with their status, folded under the row."""
    diff: str = ""
    """An edit's recorded diff: live, the row ended open on it (docs/adr/0048 addendum)."""


@dataclass(frozen=True)
class SummaryRow:
    """A summary (or goal batch, or pruning marker) that replaced earlier messages."""

    text: str
    label: str
    replaced: int


@dataclass(frozen=True)
class NoticeRow:
    """A line from Forge: a question asked, an attached file, how a turn ended."""

    text: str
    kind: str = "info"


HistoryRow = UserRow | ExpansionRow | HookRow | AnswerRow | ToolRow | SummaryRow | NoticeRow


def history_rows(messages: Sequence[Message]) -> list[HistoryRow]:
    """The rows the chat shows for `messages`, oldest first, as the live chat showed them."""
    return _HistoryReader(messages).rows()


def call_argument(call: ToolCall, name: str) -> str:
    """The string argument `name` of `call` ("" when the arguments do not hold one)."""
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return ""
    value = arguments.get(name) if isinstance(arguments, dict) else None
    return value if isinstance(value, str) else ""


class _HistoryReader:
    """One pass over the messages, tracking how the current turn stands."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.messages = messages
        self.results = {m.tool_call_id: m for m in messages if m.role == "tool"}
        self.out: list[HistoryRow] = []
        self.turn: TurnState = "none"

    def rows(self) -> list[HistoryRow]:
        cut_off = self._cut_off_turns()
        for position, message in enumerate(self.messages):
            if message.kind in SUMMARY_KINDS:
                label = SUMMARY_LABELS.get(message.kind, "Summary")
                self.out.append(SummaryRow(message.content, label, len(message.replaces)))
                self.turn = "none"  # what it replaced may have ended turns: say nothing
            elif message.kind in _PINNED or message.role in ("system", "tool"):
                continue  # the plan: the status pane; the ledger: /context; results: their calls
            elif message.role == "user":
                self._user(message)
            elif message.role == "assistant":
                self._assistant(message, cut_off=cut_off[position])
        self._close_turn(last=True)
        return self.out

    def _cut_off_turns(self) -> list[bool]:
        """Per message: whether the next user message is the cut-off note (Forge was killed
        in this turn). One pass from the end."""
        flags = [False] * len(self.messages)
        cut_off = False
        for position in range(len(self.messages) - 1, -1, -1):
            flags[position] = cut_off
            message = self.messages[position]
            if message.role == "user" and message.kind not in _PINNED:
                cut_off = message.meta.get("note") == "cut_off"
        return flags

    def _close_turn(self, *, last: bool = False) -> None:
        if self.turn == "interrupted":
            self.out.append(NoticeRow(INTERRUPTED_TURN_NOTE))
        elif self.turn == "unanswered":
            self.out.append(NoticeRow(UNANSWERED_NOTICE if last else UNANSWERED_TURN_NOTE))
        self.turn = "none"

    def _user(self, message: Message) -> None:
        if message.meta.get("note") == "cut_off":
            self.turn = "none"  # the cut-off notice says how it ended
            self.out.append(NoticeRow(CUT_OFF_NOTICE, kind="error"))
            return
        if is_stop_feedback(message):  # the hook's card, as live; the turn goes on
            notices = recorded_notices(message.meta) or [
                HookBlocked("Stop", "a Stop hook", message.content[len(STOP_FEEDBACK_PREFIX) :])
            ]
            self.out.extend(HookRow(notice) for notice in notices)
            self.turn = "unanswered"
            return
        self._close_turn()
        command = message.meta.get("user_command")
        if message.kind is MessageKind.OBSERVATION and isinstance(command, str):
            self.out.append(_user_command_row(message, command))
            return
        if message.kind is not MessageKind.OBSERVATION:
            self.turn = "unanswered"
        notices = recorded_notices(message.meta)
        # SessionStart's cards came before the prompt, UserPromptSubmit's after it.
        self.out.extend(HookRow(n) for n in notices if n.event == "SessionStart")
        self._user_rows(message)
        self.out.extend(HookRow(n) for n in notices if n.event != "SessionStart")

    def _user_rows(self, message: Message) -> None:
        """What the user typed, what it expanded to (folded), the files it attached."""
        content = message.content
        typed = message.meta.get(TYPED_KEY)
        if not isinstance(typed, str):  # written before the typed text was recorded
            typed = content.split(HOOK_CONTEXT_MARK, 1)[0]
            if "@agent-" in typed:  # the instruction for the model is not what was typed
                from forge.session.prompt_syntax import without_agent_request  # ADR 0045

                typed = without_agent_request(typed)
        attached: list[str] = []
        if "\n</attached_file>" in content:
            from forge.session.prompt_syntax import split_attachments  # ADR 0030

            split, attached = split_attachments(content)
            if TYPED_KEY not in message.meta:
                typed = split.split(HOOK_CONTEXT_MARK, 1)[0]
        self.out.append(UserRow(typed))
        expansion = message.meta.get(EXPANSION_KEY)
        if isinstance(expansion, str) and expansion:
            self.out.append(ExpansionRow(expansion))
        self.out.extend(NoticeRow(line, kind="attachment") for line in attached)
        # The same line the live chat showed (docs/adr/0055, part 2).
        self.out.extend(
            NoticeRow(image.attachment_line(), kind="attachment") for image in message.images
        )

    def _assistant(self, message: Message, *, cut_off: bool) -> None:
        text = message.content
        partial = bool(message.meta.get("partial"))
        interrupted = partial and text.endswith(INTERRUPTED_NOTE)
        if interrupted:
            text = text.removesuffix(INTERRUPTED_NOTE).rstrip()
        if text or message.reasoning:
            self.out.append(AnswerRow(text, message.reasoning))
        if interrupted:
            self.turn = "interrupted"
        elif text and not message.tool_calls and not partial:
            self.turn = "answered"
        else:
            self.turn = "unanswered"
        cancelled_seen = False
        for call in message.tool_calls:
            result = self.results.get(call.id)
            cancelled = result is None or bool(result.meta.get("cancelled"))
            if cancelled and result is not None and result.meta.get("not_run"):
                # Ended from its dialog (Esc) before it ran: live showed it cancelled.
                self.turn = "interrupted"
                if call.name not in LOOP_BREAKING_TOOLS:
                    self.out.append(_tool_row(call, result))
                continue
            if cancelled and not cut_off:
                if cancelled_seen or (result and result.content.startswith(SKIPPED_PREFIX)):
                    continue  # never started: the live chat had no row for it
                cancelled_seen = True
                self.turn = "interrupted"
                if call.name == "ask_question":
                    self.out.append(_question(call))
                elif call.name not in LOOP_BREAKING_TOOLS:
                    self.out.append(_tool_row(call, result, interrupted=True))
                continue
            self._call(call, result)
        self._child_notices(message)
        # The turn's end (Stop hooks that let it end, Notification): after the answer.
        self.out.extend(HookRow(notice) for notice in recorded_notices(message.meta))

    def _child_notices(self, message: Message) -> None:
        """After a batch of `task` rows, their children's hook notices (live: as they came)."""
        for call in message.tool_calls:
            result = self.results.get(call.id)
            if result is not None and CHILD_CALLS_KEY in result.meta:
                agent = str(result.meta.get("subagent") or "")
                self.out.extend(HookRow(notice, agent) for notice in recorded_notices(result.meta))

    def _call(self, call: ToolCall, result: Message | None) -> None:
        ok = result is not None and not result.meta.get("is_error")
        if call.name in LOOP_BREAKING_TOOLS and ok and result is not None:
            if call.name == "ask_question":
                # Live: the question as a notice, the dialog's answer as the user's message.
                self.out += [_question(call), UserRow(result.content)]
                self.turn = "unanswered"
            else:
                self.out.append(AnswerRow(result.content))
                self.turn = "answered"
            # A turn that ended on this tool: its end's hook cards (Stop, Notification).
            self.out.extend(HookRow(n) for n in recorded_notices(result.meta) if not _before(n))
            return
        if result is not None and CHILD_REASON_KEY not in result.meta:
            self.out.extend(HookRow(n) for n in recorded_notices(result.meta) if _before(n))
        row = _tool_row(call, result)
        self.out.append(row)
        if result is not None and CHILD_REASON_KEY not in result.meta:
            self.out.extend(HookRow(n) for n in recorded_notices(result.meta) if not _before(n))
        # A child stopped by the user: live, the turn ended there with the interrupted note.
        self.turn = "interrupted" if row.status_text == "interrupted" else "unanswered"


def _before(notice: HookNotice) -> bool:
    """Whether a call's hook notice came before its row (PreToolUse's) live."""
    return notice.event == "PreToolUse"


_EXIT_CODE = re.compile(r"\(?exit code (-?\d+)\)?\]$")


def _user_command_row(message: Message, command: str) -> ToolRow:
    """The user's own `!command` (recorded as an observation, ADR 0030): its command row,
    with the output and exit code the result ended with."""
    from forge.session.tool_names import USER_COMMAND_TOOL
    from forge.tui.widgets.tool_outcomes import tool_outcome

    _, _, output = message.content.partition(f"$ {command}\n")
    found = _EXIT_CODE.search(output)
    exit_code = int(found.group(1)) if found else None
    timed_out = output.endswith("]") and "[timed out after" in output.rsplit("\n", 1)[-1]
    status, text = tool_outcome(output, is_error=timed_out or bool(exit_code), exit_code=exit_code)
    call = ToolCall(message.id, USER_COMMAND_TOOL, json.dumps({"command": command}))
    return ToolRow(call, status, text, output)


def _question(call: ToolCall) -> NoticeRow:
    return NoticeRow(f"**Question:** {call_argument(call, 'question')}")


def _tool_row(call: ToolCall, result: Message | None, *, interrupted: bool = False) -> ToolRow:
    from forge.tui.widgets.tool_outcomes import recorded_tool_outcome

    if interrupted:
        status, text = "error", "interrupted"  # what `ChatView.end_turn` marked it live
    else:
        status, text = recorded_tool_outcome(result)
    if result is None:
        return ToolRow(call, status, text, "")
    if not result.meta.get("subagent"):  # not a child's: its output as recorded
        diff = result.meta.get("diff")
        shown = diff if isinstance(diff, str) and not interrupted else ""
        return ToolRow(call, status, text, result.content, diff=shown)
    children = tuple(child_calls(result.meta))
    return ToolRow(call, status, text, without_figures(result.content), children)


def estimated_lines(row: HistoryRow, width: int) -> int:
    """About how many lines `row` takes in a chat `width` cells wide (its margin included):
    enough to pick the rows that fill a screen without laying them out."""
    if isinstance(row, ToolRow) and row.diff:  # open on its diff, unless it is long
        from forge.tui.widgets.chat_blocks import FOLD_DIFF_LINES

        lines = row.diff.count("\n") + 1
        return 1 if lines > FOLD_DIFF_LINES else lines + 2
    if isinstance(row, ToolRow | SummaryRow | ExpansionRow):
        return 1  # a folded title line
    if isinstance(row, HookRow):
        return 3  # a title, a line or two of what the hook said
    text = row.text
    wrapped = sum(max(1, -(-len(line) // max(width, 1))) for line in text.split("\n"))
    return wrapped + (2 if isinstance(row, AnswerRow) else 1)


def rows_to_fill(rows: Sequence[HistoryRow], lines: int, width: int) -> int:
    """How many of the newest `rows` it takes to fill `lines` lines (all when they do not)."""
    total = 0
    for count, row in enumerate(reversed(rows), start=1):
        total += estimated_lines(row, width)
        if total >= lines:
            return count
    return len(rows)
