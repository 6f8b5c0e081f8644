"""`forge run`: one task, the same agent loop, no TUI. For scripts and CI.

Exit codes: 0 when the turn ends with the task completed (`task_completion`) or answered,
1 when it fails or is stopped (an error, the LLM-call limit, the circuit breaker, the
timeout), 2 for a usage or configuration error (nothing was run), and 128 + the signal's
number when SIGINT (130), SIGTERM (143) or SIGHUP (129) ended it (docs/adr/0021).

`--mode` picks the permission mode (`--yes` is `--mode auto`; docs/adr/0029). Unless the mode
approves it, a tool call the policy would ask about (a write, a command not on the
allowlist) is rejected with a reason the model reads, and the run goes on; `ask_question`
is answered with "no user available". See docs/adr/0015-headless-output.md.

Workspace trust (docs/adr/0034): programs the workspace defines (`.forge/mcp.yaml`) start
only when the workspace is trusted in the store (`forge trust`) or `--trust-workspace` is
given; otherwise one warning per file goes to stderr (and a `workspace_untrusted` record). A
write to Forge's own configuration (`.forge/`, `AGENTS.md`, …) is refused unless in auto mode.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from forge.agent.cache_expiry import runtime_recache_notice
from forge.agent.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalVerdict,
    QuestionAsked,
    TurnFinished,
)
from forge.agent.exit_signals import cancel_task_on_signals, exit_code_for, signal_name
from forge.agent.headless_output import JsonLinesWriter, OutputWriter, TextWriter
from forge.agent.loop import NO_USER_ANSWER
from forge.agent.runtime import Runtime, build_runtime, secrets_of
from forge.agent.sessions import SessionNotFoundError
from forge.agent.tools import ToolError
from forge.config.prices import price_table
from forge.config.settings import Settings
from forge.config.store import load_settings
from forge.llm.messages import ToolCall

EXIT_COMPLETED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
SUCCESSFUL_ENDINGS = frozenset({"completed", "answered"})
HEADLESS_REJECTION = "not approved in headless mode (use --yes or the allowlist)"
PROTECTED_REJECTION = "forge run writes Forge's configuration only in auto mode (--mode auto)"


class UsageError(Exception):
    """The command line cannot be run as given; the message says why."""


def read_task(args: argparse.Namespace) -> str:
    """The task text from the argument or `--task-file` (exactly one of them)."""
    if args.task and args.task_file:
        raise UsageError("give the task as an argument or with --task-file, not both")
    if args.task_file:
        try:
            text = Path(args.task_file).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"cannot read task file {args.task_file}: {error}") from None
    else:
        text = args.task or ""
    if not text.strip():
        raise UsageError("no task given: forge run 'what to do' (or --task-file FILE)")
    return text.strip()


def permission_mode(args: argparse.Namespace) -> str | None:
    """The mode `--mode` / `--yes` ask for (None: `tools.mode` decides)."""
    mode: str | None = getattr(args, "mode", None)
    if args.yes and mode not in (None, "auto"):
        raise UsageError(f"--yes means --mode auto; it cannot be combined with --mode {mode}")
    return "auto" if args.yes else mode


def _check_limits(args: argparse.Namespace) -> None:
    if args.max_turns < 1:
        raise UsageError("--max-turns must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")


def _workspace(args: argparse.Namespace) -> Path:
    workspace = Path(getattr(args, "workspace", ".") or ".").expanduser().resolve()
    if not workspace.is_dir():
        raise UsageError(f"workspace is not a directory: {workspace}")
    return workspace


def _settings(args: argparse.Namespace) -> Settings:
    loaded = load_settings()
    # The file's key too, even when the environment's overrides it: output may quote it.
    secrets_of(loaded.settings, loaded.file_data)
    if loaded.error is not None:
        details = "\n".join(f"  {line}" for line in loaded.error.details)
        raise UsageError(f"invalid configuration ({loaded.path}):\n{details}")
    settings = loaded.settings
    if args.model:
        llm = settings.llm.model_copy(update={"model": args.model})
        settings = settings.model_copy(update={"llm": llm})
    return settings


MCP_STARTUP_WAIT = 60.0
"""Seconds `forge run` waits at most for its MCP servers to list their tools (each server's
own `startup_timeout` usually ends the wait sooner)."""


def _expand_custom_command(task: str, workspace: Path, settings: Settings) -> tuple[str, Settings]:
    """A task "/name args" naming a custom command becomes its expanded text, run on the
    command's model if it has one; files that cannot be used are warned about on stderr."""
    from forge.agent.custom_commands import load_custom_commands

    custom = load_custom_commands(workspace, max_file_bytes=settings.commands.max_file_bytes)
    for problem in custom.problems:
        print(f"forge run: warning: custom command not loaded: {problem}", file=sys.stderr)
    found = custom.expand_input(task)
    if found is None:
        return task, settings
    command, text = found
    if command.model:
        llm = settings.llm.model_copy(update={"model": command.model})
        settings = settings.model_copy(update={"llm": llm})
    return text, settings


def run_headless(args: argparse.Namespace) -> int:
    """Run `forge run` with parsed arguments (see `forge.cli`); returns the exit code."""
    from forge.agent.logs import configure_file_logging

    try:
        task = read_task(args)
        _check_limits(args)
        mode = permission_mode(args)
        workspace = _workspace(args)
        settings = _settings(args)
    except UsageError as error:
        print(f"forge run: {error}", file=sys.stderr)
        return EXIT_USAGE
    task, settings = _expand_custom_command(task, workspace, settings)
    secrets = secrets_of(settings)
    configure_file_logging(secrets)
    try:
        runtime = build_runtime(
            settings,
            workspace,
            session_id=getattr(args, "resume", None),
            resume_latest=bool(getattr(args, "continue_session", False)),
            ask_user=False,
            mode=mode,
            max_llm_calls=args.max_turns,
            trust_workspace=bool(getattr(args, "trust_workspace", False)),
        )
    except (SessionNotFoundError, ValueError) as error:
        print(f"forge run: {error}", file=sys.stderr)
        return EXIT_USAGE
    writer: OutputWriter
    if args.output == "jsonl":
        writer = JsonLinesWriter(sys.stdout, sys.stderr, secrets)
    else:
        writer = TextWriter(sys.stdout, sys.stderr, secrets, describe=_describer(runtime))
    writer.cost_report = lambda: runtime.agent.costs.report(price_table(runtime.settings.prices))
    for problem in runtime.session.problems:  # a resumed file that needed repair
        writer.write_err(f"forge run: warning: session {runtime.session_id}: {problem}")
    if notice := runtime_recache_notice(runtime):
        writer.write_err(f"forge run: {notice}")
    task = _attach_mentions(runtime, task, writer)
    received: list[int] = []
    try:
        return asyncio.run(
            _run_until_signal(
                run_task(runtime, task, writer, yes=bool(args.yes), time_limit=args.timeout),
                received,
            )
        )
    except (KeyboardInterrupt, asyncio.CancelledError):
        received.append(signal.SIGINT)
    number = received[0]
    with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
        writer.write_err(f"forge run: interrupted ({signal_name(number)})")
    return exit_code_for(number)


def _attach_mentions(runtime: Runtime, task: str, writer: OutputWriter) -> str:
    """The task with its `@path` mentions attached (ADR 0030); says on stderr what was
    attached and which mentions attached nothing (the task runs without them)."""
    from forge.agent.mentions import expand_for_runtime, has_mentions

    if not has_mentions(task):
        return task
    expansion = expand_for_runtime(runtime, task)
    for attachment in expansion.attachments:
        writer.write_err(f"forge run: {attachment.describe()}")
    for problem in expansion.problems:
        writer.write_err(f"forge run: warning: {problem}")
    return expansion.text


async def _run_until_signal(work: Coroutine[Any, Any, int], received: list[int]) -> int:
    """Await `work`; SIGINT, SIGTERM or SIGHUP cancel it (its command's group is killed on
    the way out) and raise `CancelledError` with the signal recorded in `received`."""
    task = asyncio.ensure_future(work)
    cancel_task_on_signals(asyncio.get_running_loop(), task, received)
    return await task


async def run_task(
    runtime: Runtime, task: str, writer: OutputWriter, *, yes: bool, time_limit: float | None
) -> int:
    """Drive one turn to its end, answering approvals and questions as a headless client;
    closes the runtime. Returns the exit code."""
    writer.run_started(runtime.session_id, runtime.settings.llm.model, str(runtime.workspace))
    _warn_untrusted(runtime, writer)
    reason = "cancelled"
    if runtime.mcp is not None:  # a server failing to start or crashing is said as it happens
        runtime.mcp.subscribe(writer.mcp_notice)
    try:
        async with asyncio.timeout(time_limit):
            await runtime.wait_for_mcp(MCP_STARTUP_WAIT)  # one turn: list the tools first
            async for event in runtime.agent.run_turn(task):
                writer.event(event)
                if isinstance(event, ApprovalRequested):
                    decision = headless_decision(yes, event.protected)
                    writer.approval_decided(event.call, decision)
                    event.future.set_result(decision)
                elif isinstance(event, QuestionAsked):
                    event.future.set_result(NO_USER_ANSWER)
                elif isinstance(event, TurnFinished):
                    reason = event.reason
    except TimeoutError:
        writer.timed_out(time_limit or 0)
        return EXIT_FAILED
    finally:
        await runtime.aclose()
    return EXIT_COMPLETED if reason in SUCCESSFUL_ENDINGS else EXIT_FAILED


def headless_decision(yes: bool, protected: str = "") -> ApprovalDecision:
    """Approve with `--yes`; otherwise reject with a reason the model can act on. A write to
    Forge's configuration (`protected` says why) is rejected unless in auto mode."""
    if protected:
        return ApprovalDecision(ApprovalVerdict.REJECT, f"{protected}; {PROTECTED_REJECTION}")
    if yes:
        return ApprovalDecision(ApprovalVerdict.APPROVE_ONCE)
    return ApprovalDecision(ApprovalVerdict.REJECT, HEADLESS_REJECTION)


def _warn_untrusted(runtime: Runtime, writer: OutputWriter) -> None:
    """One warning per workspace file whose programs will not start (not trusted), and one
    when the trust store is unusable."""
    from forge.agent.trust.sources import workspace_sources

    trust = runtime.trust
    if trust is None:
        return
    for source in workspace_sources(runtime.workspace):
        status = trust.status(source)
        if source.programs and not trust.permits(source):
            writer.workspace_untrusted(source, status)
    if trust.store_problem:
        writer.write_err(f"forge run: warning: {trust.store_problem}")


def _describer(runtime: Runtime) -> Callable[[ToolCall], str]:
    def describe(call: ToolCall) -> str:
        try:
            prepared = runtime.registry.prepare(call)
        except ToolError:  # a bad call still gets a line; its error result follows
            return call.name
        return prepared.tool.describe(prepared.arguments)

    return describe
