"""How `forge run` prints a run (`--output-format`): text, and Forge's own records.

- text: progress (tool calls, context events, the ending, the cost) on stderr, and only the
  final answer on stdout at the end;
- json: errors on stderr, and one `result` object on stdout at the end (`JsonWriter`; the
  format's writer, `claude_stream.ClaudeResultWriter`, prints Claude Code's);
- forge-jsonl (`--output jsonl`): one JSON object per line on stdout, `init` first and
  `result` last (`JsonLinesWriter`; stream-json in Claude Code's shapes is
  `claude_stream.ClaudeStreamWriter`, codex-json `codex_json.CodexJsonWriter`).

Every writer masks secrets in everything it prints, and sends errors to stderr as a readable
line. The text writer makes everything terminal-safe (`forge.text_safety`: the
answer, tool results and server errors never write a control sequence to the user's
terminal); the JSON formats escape control characters as JSON does (C1 included, see
`forge.headless.jsonl.dumps`). The records are documented in docs/adr/0015-headless-output.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TextIO, assert_never

from forge.agent.costs import CostReport
from forge.agent.error_kinds import TIMEOUT_KIND
from forge.agent.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalVerdict,
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
    RetryScheduled,
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
from forge.agent.mcp.notices import McpServerNotice
from forge.config.secrets import redact
from forge.context.plan import PLAN_TOOL, checklist, plan_from_meta
from forge.headless.jsonl import dumps, event_to_dict, has_record
from forge.llm.messages import ToolCall
from forge.session.background_follow import (
    BackgroundEnded,
    BackgroundLines,
    BackgroundUpdate,
    is_background_start,
)
from forge.session.events import AttachmentsAdded, SessionEvent
from forge.session.notice_lines import context_line, hook_line
from forge.session.transcript import TurnTranscript
from forge.session.trust import ProgramSource, TrustStatus, printable
from forge.text_safety import terminal_safe

MASK = "***"
ANSWER_TOOLS = frozenset({"task_completion", "converse"})
"""Tools whose argument is the final answer: text mode prints it once, on stdout."""
TEXT_MODE_SILENT = (
    MessageDelta,
    ReasoningDelta,
    ToolOutputDelta,
    UsageEvent,
    ContextUsage,
    RetryScheduled,
    QuestionAsked,
    ApprovalRequested,
)
"""Events text mode prints nothing for (explicit cases of `TextWriter.event`): the streams and
the counts are left to stream-json, the answer is printed once at the end, a question is
answered "no user" by the run and an approval is said by `approval_decided`."""
UNATTENDED_HINT = "allow it with --yes, --mode accept-edits or tools.command_allowlist"
"""Said to the user (not the model) beside a call no one could approve."""


class OutputWriter:
    """The shared part: masked writes to stdout and stderr."""

    def __init__(self, out: TextIO, err: TextIO, secrets: Sequence[str] = ()) -> None:
        self.out = out
        self.err = err
        self.secrets = tuple(secret for secret in secrets if secret)
        self.cost_report: Callable[[], CostReport] | None = None
        """The session's cost so far; the final record (jsonl) or a stderr line (text)
        carries it (docs/adr/0029)."""
        self.transcript = TurnTranscript()
        """The run's events folded (docs/adr/0059): the partial answer, the calls that ran."""

    def mask(self, text: str) -> str:
        """`text` with every secret (given, or known to the process) replaced by `***`."""
        return redact(text, MASK, self.secrets)

    def write_out(self, text: str) -> None:
        """Write to stdout now (flushed: a pipe reader sees progress as it happens)."""
        self.out.write(self.mask(text))
        self.out.flush()

    def write_err(self, line: str) -> None:
        """Write one line to stderr."""
        self.err.write(self.mask(line.rstrip("\n")) + "\n")
        self.err.flush()

    def cost(self) -> CostReport | None:
        """The cost so far, when the writer was given a source."""
        return self.cost_report() if self.cost_report is not None else None

    def run_started(self, session_id: str, model: str, workspace: str) -> None:
        """The run began."""

    def init(self, record: dict[str, Any]) -> None:
        """The run's `init` record (session, model, tools, mode, version): before any other."""

    def interrupted(self, signal_name: str) -> None:
        """A signal stopped the run."""
        self.write_err(f"forge run: interrupted ({signal_name})")

    def finish(self, result: dict[str, Any]) -> None:
        """The run's `result` record (docs/adr/0015): always the last thing written."""

    def background(self, update: BackgroundUpdate) -> None:
        """A background command's new output or its end (docs/adr/0057); json prints none."""

    def event(self, event: SessionEvent) -> None:
        """One session event: in every format, an error and what the task's `@path` mentions
        attached (and which attached nothing; the task runs without them, ADR 0030) are said
        on stderr."""
        self.transcript.observe(event)
        if isinstance(event, ErrorEvent):
            self.write_err(f"forge: error ({event.kind}): {event.message}")
        elif isinstance(event, AttachmentsAdded):
            for line in event.attached:
                self.write_err(f"forge run: {line}")
            for problem in event.problems:
                self.write_err(f"forge run: warning: {problem}")

    def approval_decided(self, call: ToolCall, decision: ApprovalDecision) -> None:
        """The headless client answered an approval request itself."""

    def mcp_notice(self, notice: McpServerNotice) -> None:
        """An MCP server failed, crashed or went down: one line on stderr."""
        self.write_err(f"forge run: {notice.text(hint='')}")

    def workspace_untrusted(self, source: ProgramSource, status: TrustStatus) -> None:
        """A workspace file's programs were not started (not trusted): one line on stderr."""
        self.write_err(f"forge run: warning: {untrusted_text(source, status)}")

    def timed_out(self, seconds: float) -> None:
        """The run hit `--timeout`."""
        self.write_err(f"forge: error ({TIMEOUT_KIND}): no result after {seconds:g} seconds")


class JsonLinesWriter(OutputWriter):
    """One JSON object per line on stdout, each with a `type`."""

    def __init__(self, out: TextIO, err: TextIO, secrets: Sequence[str] = ()) -> None:
        super().__init__(out, err, secrets)
        self._held: list[dict[str, Any]] | None = []
        """Records written before `init` (an MCP notice while the tools are listed)."""
        self.early_init: dict[str, Any] | None = None
        """The `init` record as known before the MCP servers listed their tools: written if
        the run ends before `init` is (a signal, a timeout while waiting)."""

    def _record(self, record: dict[str, Any]) -> None:
        if self._held is not None:
            self._held.append(record)
            return
        self.write_out(dumps(record) + "\n")

    def init(self, record: dict[str, Any]) -> None:
        """The `init` record, then whatever was held back for it."""
        held, self._held = self._held or [], None
        self._record(record)
        for earlier in held:
            self._record(earlier)

    def finish(self, result: dict[str, Any]) -> None:
        """The `result` record, last."""
        if self._held is not None:  # stopped before the tools were listed
            self.init(self.early_init or {"type": "init"})
        self._record(result)

    def interrupted(self, signal_name: str) -> None:
        """The stderr line, and `turn_finished` with reason `signal`."""
        super().interrupted(signal_name)
        self._record(
            {
                "type": "turn_finished",
                "reason": "signal",
                "final_text": self.transcript.answer,
                **self._cost_fields(),
            }
        )

    def run_started(self, session_id: str, model: str, workspace: str) -> None:
        """A `run_started` record: session id, model, workspace."""
        self._record(
            {
                "type": "run_started",
                "session_id": session_id,
                "model": model,
                "workspace": workspace,
            }
        )

    def event(self, event: SessionEvent) -> None:
        """The event's record (errors also go to stderr); a retry has none (ADR 0015)."""
        super().event(event)
        if not has_record(event):
            return
        if isinstance(event, ToolCallFinished) and not _ran(self.transcript, event.call):
            # A refused or rejected call did not run; its records still come in pairs.
            self._record(event_to_dict(ToolCallStarted(event.call)))
        record = event_to_dict(event)
        if isinstance(event, TurnFinished):
            record.update(self._cost_fields())
        self._record(record)

    def _cost_fields(self) -> dict[str, Any]:
        cost = self.cost()
        return {"cost": cost.to_dict()} if cost is not None else {}

    def background(self, update: BackgroundUpdate) -> None:
        """A `background_output` record (new whole lines) or a `background_ended` one."""
        match update:
            case BackgroundLines():
                self._record(
                    {
                        "type": "background_output",
                        "call_id": update.call_id,
                        "command_id": update.command_id,
                        "text": update.text,
                    }
                )
            case BackgroundEnded():
                self._record(
                    {
                        "type": "background_ended",
                        "call_id": update.call_id,
                        "command_id": update.command_id,
                        "state": update.state,
                        "exit_code": update.exit_code,
                    }
                )
            case _:
                assert_never(update)

    def approval_decided(self, call: ToolCall, decision: ApprovalDecision) -> None:
        """An `approval_decision` record: call id, tool name, verdict, reason."""
        self._record(
            {
                "type": "approval_decision",
                "call_id": call.id,
                "name": call.name,
                "verdict": decision.verdict.value,
                "reason": decision.reason,
            }
        )

    def mcp_notice(self, notice: McpServerNotice) -> None:
        """The stderr line, and an `mcp_server` record (server, kind, reason, text)."""
        super().mcp_notice(notice)
        self._record(
            {
                "type": "mcp_server",
                "server": notice.server,
                "kind": notice.kind,
                "reason": notice.reason,
                "text": notice.text(hint=""),
            }
        )

    def workspace_untrusted(self, source: ProgramSource, status: TrustStatus) -> None:
        """The stderr line, and a `workspace_untrusted` record (file, status, programs
        [{name, command}], text)."""
        super().workspace_untrusted(source, status)
        self._record(
            {
                "type": "workspace_untrusted",
                "file": source.file,
                "status": status.name.lower(),
                "programs": [{"name": p.name, "command": p.command} for p in source.programs],
                "text": untrusted_text(source, status),
            }
        )

    def timed_out(self, seconds: float) -> None:
        """An `error` record of kind `timeout`, then `turn_finished` with reason `timeout`."""
        super().timed_out(seconds)
        message = f"no result after {seconds:g} seconds"
        self._record({"type": "error", "message": message, "kind": TIMEOUT_KIND, "fatal": True})
        self._record(
            {
                "type": "turn_finished",
                "reason": "timeout",
                "final_text": self.transcript.answer,
                **self._cost_fields(),
            }
        )


class TextWriter(OutputWriter):
    """Progress on stderr (what the model says between tool calls, one line per tool call and
    per context event, the ending, the cost); the final answer alone on stdout at the end."""

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        secrets: Sequence[str] = (),
        describe: Callable[[ToolCall], str] | None = None,
    ) -> None:
        super().__init__(out, err, secrets)
        self.describe = describe or (lambda call: call.name)

    def _line(self, text: str) -> None:
        self.write_err(text)

    def write_out(self, text: str) -> None:
        """Write terminal-safe text to stdout (docs/adr/0035)."""
        super().write_out(terminal_safe(text))

    def write_err(self, line: str) -> None:
        """Write one terminal-safe line to stderr."""
        super().write_err(terminal_safe(line))

    def timed_out(self, seconds: float) -> None:
        """The timeout error, then the cost."""
        super().timed_out(seconds)
        self._cost_line()

    def interrupted(self, signal_name: str) -> None:
        """The interruption, then the cost."""
        super().interrupted(signal_name)
        self._cost_line()

    def finish(self, result: dict[str, Any]) -> None:
        """The final answer on stdout (nothing when there is none)."""
        text = str(result.get("result") or "")
        if text:
            self.write_out(text if text.endswith("\n") else text + "\n")

    def _cost_line(self) -> None:
        cost = self.cost()
        if cost is not None:
            self.write_err(f"forge: {cost.summary_line()}")

    def event(self, event: SessionEvent) -> None:
        """Print the event if it has a readable form (deltas of the answer, reasoning, usage
        and tool output are left to the stream-json mode)."""
        super().event(event)
        match event:
            case AssistantMessageDone():
                if event.message.tool_calls and event.message.content.strip():
                    self._line(event.message.content.strip())
            case ToolCallStarted():
                if event.call.name not in ANSWER_TOOLS:  # the answer goes to stdout, once
                    self._line(f"→ {self.describe(event.call)}")
            case ToolCallFinished():
                self._call_finished(event)
            case TurnFinished():
                self._finished(event)
                self._cost_line()
            case SubagentEvent():
                self._child(event)
            case (
                ContextWarning()
                | SummarizationStarted()
                | SummarizationProgress()
                | SummarizationCompleted()
                | SummarizationFailed()
                | SummarizerDisabled()
                | UserMessageShortened()
            ):
                self._line(context_line(event))
            case HookBlocked() | HookOutput() | HookWarning():
                self._line(hook_line(event))
            case SteeringAdded():  # a `--steer-file` line, added to the turn (docs/adr/0057)
                first = event.text.splitlines()[0] if event.text.strip() else ""
                self._line(f"[steering] {first}")
            case ErrorEvent() | AttachmentsAdded():
                pass  # said by `OutputWriter.event`
            case (
                MessageDelta()
                | ReasoningDelta()
                | ToolOutputDelta()
                | UsageEvent()
                | ContextUsage()
                | RetryScheduled()
                | QuestionAsked()
                | ApprovalRequested()
            ):
                pass  # TEXT_MODE_SILENT
            case _:
                assert_never(event)

    def _call_finished(self, event: ToolCallFinished) -> None:
        if event.metadata.get("rejected"):  # `approval_decided` said it already
            return
        if event.call.name in ANSWER_TOOLS and not event.is_error:
            return
        if not _ran(self.transcript, event.call) or event.call.name in ANSWER_TOOLS:
            # refused by the mode, or an answer tool that failed (its start was not shown)
            self._line(f"→ {self.describe(event.call)}")
        started = is_background_start(event.metadata) if not event.is_error else None
        if started is not None:  # it goes on; `background` streams it (docs/adr/0057)
            self._line(f"  ⧗ running in the background as {started}")
            return
        self._line(f"  {_result_line(event)}")
        if event.call.name == PLAN_TOOL and not event.is_error:
            for line in checklist(plan_from_meta(event.metadata.get("plan")) or ()).splitlines():
                self._line(f"    {line}")

    def background(self, update: BackgroundUpdate) -> None:
        """A background command's output lines as they come, then its end."""
        match update:
            case BackgroundLines():
                for line in update.text.splitlines():
                    self._line(f"  [{update.command_id}] {line}")
            case BackgroundEnded():
                self._line(f"■ background {update.command_id} ended: {update.state}")
            case _:
                assert_never(update)

    def _child(self, event: SubagentEvent) -> None:
        """A child's tool calls, indented and labelled with its agent (docs/adr/0045)."""
        inner = event.event
        if isinstance(inner, ToolCallStarted):
            self._line(f"  [{event.agent}] → {self.describe(inner.call)}")
        elif isinstance(inner, ToolCallFinished) and inner.is_error:
            self._line(f"  [{event.agent}]   {_result_line(inner)}")
        elif line := hook_line(inner):  # the parent's hooks run for the child's calls
            self._line(f"  [{event.agent}] {line}")

    def _finished(self, event: TurnFinished) -> None:
        if event.reason in ("completed", "answered"):
            self._line(f"✔ {event.reason}")
        else:
            detail = f": {event.final_text}" if event.final_text else ""
            self._line(f"■ stopped ({event.reason}){detail}")

    def approval_decided(self, call: ToolCall, decision: ApprovalDecision) -> None:
        """One line saying what was decided for whom (and, for a call nobody could approve,
        how the user can allow it)."""
        reason = f": {decision.reason}" if decision.reason else ""
        if decision.unattended:
            reason = f"{reason} — {UNATTENDED_HINT}"
        if decision.verdict is ApprovalVerdict.REJECT:
            self._line(f"✗ not allowed {self.describe(call)}{reason}")
        else:
            self._line(f"✓ approved {self.describe(call)}{reason}")


def untrusted_text(source: ProgramSource, status: TrustStatus) -> str:
    """One line: which file was skipped, why, what it would have run, how to trust it."""
    runs = "; ".join(printable(f"{p.name}: {p.command}") for p in source.programs)
    return (
        f"{source.file} not used: this workspace is {status.value}; it would run {runs}. "
        "Trust it with `forge trust` (or --trust-workspace for this run)."
    )


def _ran(transcript: TurnTranscript, call: ToolCall) -> bool:
    """Whether `call` started (a call the mode refused or the user rejected never does)."""
    state = transcript.call(call.id)
    return state is not None and state.started


def _result_line(event: ToolCallFinished) -> str:
    first = event.result.strip().split("\n", 1)[0]
    if len(first) > 120:
        first = first[:119] + "…"
    if event.is_error:
        code = f" (exit {event.exit_code})" if event.exit_code is not None else ""
        return f"✗ {first}{code}"
    return f"✓ {first}" if first else "✓"


class JsonWriter(OutputWriter):
    """`--output-format json`: nothing on stdout until the end, then the `result` object,
    which carries `init`'s `sandbox` (its only record is also its first)."""

    _sandbox: dict[str, Any] | None = None

    def init(self, record: dict[str, Any]) -> None:
        """Keep the sandbox for the result."""
        sandbox = record.get("sandbox")
        self._sandbox = sandbox if isinstance(sandbox, dict) else None

    def finish(self, result: dict[str, Any]) -> None:
        """The `result` record as one JSON object."""
        if self._sandbox is not None:
            result = {**result, "sandbox": self._sandbox}
        self.write_out(dumps(result) + "\n")
