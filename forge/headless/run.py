"""`forge run`: one task, the same agent loop, no TUI. For scripts and CI.

Exit codes (binding; `forge.headless.exit_status`, docs/adr/0015): 0 the task was completed
or answered; 1 the run failed; 2 a usage or configuration error, found before any request;
3 `--max-turns`; 4 `--max-budget-usd`; 5 `--timeout`; 128 + N when signal N ended it (130
SIGINT, 143 SIGTERM, 129 SIGHUP; docs/adr/0021). Whatever the ending, the session is saved
(unless `--ephemeral`) and the `result` record is written.

`--mode` picks the permission mode (`--yes` is `--mode auto`; docs/adr/0029). Unless the mode
approves it, a tool call the policy would ask about (a write, a command not on the
allowlist) is not run: the model reads "not allowed in this run (no approval possible in
headless mode)", the call is listed in `permission_denials`, and the run goes on;
`ask_question` is answered with "no user available". See docs/adr/0015-headless-output.md.

Workspace trust (docs/adr/0034): programs the workspace defines (`.forge/mcp.yaml`) start
only when the workspace is trusted in the store (`forge trust`) or `--trust-workspace` is
given; otherwise one warning per file goes to stderr (and a `workspace_untrusted` record). A
write to Forge's own configuration (`.forge/`, `AGENTS.md`, …) is refused unless in auto mode.
Hooks (docs/adr/0043) run as in the TUI — project ones only in a trusted workspace — and
`--no-hooks` runs none; what they say goes to stderr (text) or as `hook_*` records.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from forge.agent.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalVerdict,
    QuestionAsked,
    TurnFinished,
)
from forge.agent.exit_signals import cancel_task_on_signals, signal_name
from forge.config.ephemeral import set_ephemeral
from forge.config.prices import PriceTable, price_table
from forge.config.settings import Settings
from forge.config.store import load_settings
from forge.headless.attention import ring_at_end
from forge.headless.background_stream import BackgroundFollowers
from forge.headless.claude_stream import ClaudeResultWriter, ClaudeStreamWriter
from forge.headless.codex_json import CodexJsonWriter
from forge.headless.exit_status import (
    EXIT_COMPLETED,
    EXIT_FAILED,
    EXIT_USAGE,
    SUCCESSFUL_ENDINGS,
    Ending,
    ending_for,
    signal_ending,
)
from forge.headless.output import JsonLinesWriter, OutputWriter, TextWriter
from forge.headless.result import BudgetGuard, RunRecorder, make_init_record
from forge.headless.steer_file import check_steer_file, start_steer_reader
from forge.llm.image_parts import ImagePart
from forge.llm.messages import ToolCall
from forge.session.build import SessionOptions, build_session
from forge.session.core import Session
from forge.session.images import ImageInputError, images_from_paths
from forge.session.parts import secrets_of
from forge.session.saved_sessions import SessionNotFoundError
from forge.session.unattended import NO_USER_ANSWER, UNCONFINED_PREFIX
from forge.unicode_repair import repaired

logger = logging.getLogger(__name__)

__all__ = ["EXIT_COMPLETED", "EXIT_FAILED", "EXIT_USAGE", "SUCCESSFUL_ENDINGS"]

HEADLESS_REJECTION = "not allowed in this run (no approval possible in headless mode)"
"""What the model reads for a call that needed an approval nobody could give."""
STDIN_TASK = "-"
"""`forge run -` reads the task from stdin."""
PROTECTED_REJECTION = "forge run writes Forge's configuration only in auto mode (--mode auto)"
UNCONFINED_REJECTION = (
    "forge run runs a command outside the sandbox only in auto mode with "
    "tools.sandbox.allow_unconfined: true"
)


class UsageError(Exception):
    """The command line cannot be run as given; the message says why."""


def read_task(args: argparse.Namespace) -> str:
    """The task text from the argument, stdin (`-`) or `--task-file` (exactly one of them)."""
    if args.task and args.task_file:
        raise UsageError("give the task as an argument or with --task-file, not both")
    if args.task_file:
        try:
            data = Path(args.task_file).expanduser().read_bytes()
            text = data.decode("utf-8", errors="replace")
        except OSError as error:
            raise UsageError(f"cannot read task file {args.task_file}: {error}") from None
    elif args.task == STDIN_TASK:
        try:
            # Bytes, decoded here: invalid UTF-8 on stdin becomes U+FFFD, not a crash.
            text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise UsageError(f"cannot read the task from stdin: {error}") from None
    else:
        text = args.task or ""
    if not text.strip():
        raise UsageError(
            "no task given: forge run 'what to do' (or --task-file FILE, or - for stdin)"
        )
    # An argument with bytes that are not UTF-8 arrives holding lone surrogates.
    return repaired(text.strip(), "the task")


def permission_mode(args: argparse.Namespace) -> str | None:
    """The mode `--mode` / `--yes` ask for (None: `tools.mode` decides)."""
    mode: str | None = getattr(args, "mode", None)
    if args.yes and mode not in (None, "auto"):
        raise UsageError(f"--yes means --mode auto; it cannot be combined with --mode {mode}")
    return "auto" if args.yes else mode


def output_format(args: argparse.Namespace) -> str:
    """text, json, stream-json, forge-jsonl or codex-json, from `--output-format` or the older
    `--output` (whose jsonl keeps meaning Forge's own records)."""
    chosen: str | None = getattr(args, "output_format", None)
    older = {"jsonl": "forge-jsonl", "text": "text", None: None}[getattr(args, "output", None)]
    if chosen and older and chosen != older:
        raise UsageError(f"--output {args.output} contradicts --output-format {chosen}")
    return chosen or older or "text"


def budget(args: argparse.Namespace) -> float | None:
    """`--max-budget-usd` as dollars (None: no budget); a positive, finite number."""
    raw = getattr(args, "max_budget_usd", None)
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"--max-budget-usd must be a number of dollars, not {raw!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"--max-budget-usd must be more than 0, not {raw}")
    return value


def _check_limits(args: argparse.Namespace) -> None:
    if args.max_turns < 1:
        raise UsageError("--max-turns must be at least 1")
    if args.timeout is not None and (not math.isfinite(args.timeout) or args.timeout <= 0):
        raise UsageError("--timeout must be a positive number of seconds")
    if getattr(args, "ephemeral", False) and (
        getattr(args, "continue_session", False) or getattr(args, "resume", None)
    ):
        raise UsageError("--ephemeral keeps no session, so it cannot continue or resume one")


def _check_writable(path_text: str | None) -> Path | None:
    """`--output-last-message FILE`, checked before any request: a file that can be written."""
    if not path_text:
        return None
    path = Path(path_text).expanduser()
    if path.is_dir():
        raise UsageError(f"--output-last-message: {path} is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"--output-last-message: no directory {parent}")
    if not os.access(path if path.exists() else parent, os.W_OK):
        raise UsageError(f"--output-last-message: cannot write {path}")
    return path


def _check_steer_file(path_text: str | None) -> Path | None:
    if path_text is None:
        return None
    try:
        return check_steer_file(path_text)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _check_prices(settings: Settings) -> None:
    """With a budget, every model the run may call needs a price (else spending is unknown)."""
    table = price_table(settings.prices)
    for model in {settings.llm.model, settings.llm.effective_summarization_model}:
        if table.lookup(model) is None:
            raise UsageError(
                f"--max-budget-usd needs a price for model {model!r}, and none is known: "
                f"add it under `prices:` in the config file"
            )


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
        details = "\\n".join(f"  {line}" for line in loaded.error.details)
        raise UsageError(f"invalid configuration ({loaded.path}):\\n{details}")
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
    from forge.session.custom_commands import read_custom_commands

    custom = read_custom_commands(workspace, settings)
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


def _make_writer(
    kind: str, secrets: list[str], session: Session, *, partial_messages: bool = False
) -> OutputWriter:
    if kind == "stream-json":
        return ClaudeStreamWriter(
            sys.stdout, sys.stderr, secrets, partial_messages=partial_messages
        )
    if kind == "forge-jsonl":
        return JsonLinesWriter(sys.stdout, sys.stderr, secrets)
    if kind == "codex-json":
        return CodexJsonWriter(sys.stdout, sys.stderr, secrets)
    if kind == "json":
        return ClaudeResultWriter(sys.stdout, sys.stderr, secrets)
    return TextWriter(sys.stdout, sys.stderr, secrets, describe=_describer(session))


def _images(args: argparse.Namespace, settings: Settings) -> tuple[ImagePart, ...]:
    """`--image`'s files, read and scaled for the provider; `UsageError` for one that is
    not a readable image (nothing is sent)."""
    paths = list(getattr(args, "image", None) or [])
    if not paths:
        return ()
    try:
        return images_from_paths(paths, settings)
    except ImageInputError as error:
        raise UsageError(str(error)) from None


def run_headless(args: argparse.Namespace) -> int:
    """Run `forge run` with parsed arguments (see `forge.cli`); returns the exit code."""
    from forge.session.logs import configure_file_logging

    try:
        _check_limits(args)
        if getattr(args, "ephemeral", False):
            set_ephemeral()  # before anything that could write is built
        kind = output_format(args)
        if getattr(args, "include_partial_messages", False) and kind != "stream-json":
            raise UsageError("--include-partial-messages needs --output-format stream-json")
        limit = budget(args)
        last_message = _check_writable(getattr(args, "output_last_message", None))
        steer_file = _check_steer_file(getattr(args, "steer_file", None))
        task = read_task(args)
        mode = permission_mode(args)
        workspace = _workspace(args)
        settings = _settings(args)
        original_task = task
        task, settings = _expand_custom_command(task, workspace, settings)
        if limit is not None:
            _check_prices(settings)
        images = _images(args, settings)
    except UsageError as error:
        print(f"forge run: {error}", file=sys.stderr)
        return EXIT_USAGE
    secrets = secrets_of(settings)
    configure_file_logging(secrets)
    try:
        session = build_session(
            settings,
            workspace,
            SessionOptions(
                session_id=getattr(args, "resume", None),
                resume_latest=bool(getattr(args, "continue_session", False)),
                ask_user=False,
                mode=mode,
                max_llm_calls=args.max_turns,
                trust_workspace=bool(getattr(args, "trust_workspace", False)),
                no_hooks=bool(getattr(args, "no_hooks", False)),
            ),
        )
    except (SessionNotFoundError, ValueError) as error:
        print(f"forge run: {error}", file=sys.stderr)
        return EXIT_USAGE
    partial = bool(getattr(args, "include_partial_messages", False))
    writer = _make_writer(kind, secrets, session, partial_messages=partial)
    prices = price_table(session.settings.prices)
    writer.cost_report = session.reports.cost
    recorder = _recorder(session, prices)
    if isinstance(writer, ClaudeStreamWriter | ClaudeResultWriter):
        writer.recorder = recorder
    if isinstance(writer, ClaudeStreamWriter) and session.servers.mcp is not None:
        writer.mcp_statuses = session.servers.mcp.statuses
    if limit is not None:
        session.stop_when(BudgetGuard(limit, recorder.spent))
    if isinstance(writer, JsonLinesWriter):
        writer.early_init = init_record(session)
    for problem in session.log.problems:  # a resumed file that needed repair
        writer.write_err(f"forge run: warning: session {session.session_id}: {problem}")
        recorder.notices.append(f"session {session.session_id}: {problem}")
    for problem in session.agent_problems:  # an agent definition that cannot be used
        writer.write_err(f"forge run: warning: {problem}")
    for skill_notice in session.skill_notices:  # skills left out (file, rule), a capped listing
        writer.write_err(f"forge run: warning: skills: {skill_notice}")
    if task != original_task:  # a custom command ran: a skill of that name is hidden
        name = original_task.strip()[1:].partition(" ")[0]
        if any(skill == name for skill, _ in session.skill_commands()):
            writer.write_err(
                f"forge run: warning: skills: /{name} is also a custom command; "
                "the custom command wins"
            )
    skill_text = session.skill_command(task) if task == original_task else None
    if skill_text is not None:
        task = skill_text  # `/name args` naming a skill (a custom command won above)
    if notice := session.reports.recache_notice():
        writer.write_err(f"forge run: {notice}")
    for background_notice in session.background_notices:  # left by a Forge that died
        writer.write_err(f"forge run: {background_notice}")
    if steer_file is not None:  # lines steered into the turn (docs/adr/0057)
        start_steer_reader(steer_file, session.steer_when_running)
    received: list[int] = []
    try:
        ending = asyncio.run(
            _run_until_signal(
                run_task(
                    session,
                    task,
                    writer,
                    yes=bool(args.yes),
                    time_limit=args.timeout,
                    typed=original_task if task != original_task else None,
                    recorder=recorder,
                    images=images,
                ),
                received,
            )
        )
    except (KeyboardInterrupt, asyncio.CancelledError):
        received.append(signal.SIGINT)
        ending = signal_ending(received[0])
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            writer.interrupted(signal_name(received[0]))
    except Exception as error:  # a failure outside the turn: still a result record, exit 1
        logger.exception("forge run failed")
        writer.write_err(f"forge: error (internal): {error or type(error).__name__}")
        ending = ending_for("error")
    code = _finish(writer, recorder, ending, session.session_id, last_message)
    ring_at_end(session.settings.ui.notify, sys.stderr)
    return code


def _recorder(session: Session, prices: PriceTable) -> RunRecorder:
    describe = _describer(session)
    return RunRecorder(
        lambda: session.costs,
        prices,
        agent_requests=lambda: session.turn_llm_calls,
        describe=describe,
    )


def _finish(
    writer: OutputWriter,
    recorder: RunRecorder,
    ending: Ending,
    session_id: str,
    last_message: Path | None,
) -> int:
    """Write the `result` record (and `--output-last-message`); the exit code."""
    result = recorder.result(ending, session_id)
    with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
        writer.finish(result)
    if last_message is not None:
        try:
            last_message.write_text(writer.mask(recorder.last_text()), encoding="utf-8")
        except OSError as error:
            writer.write_err(f"forge run: cannot write {last_message}: {error}")
            return ending.exit_code or EXIT_FAILED
    return ending.exit_code


def init_record(session: Session) -> dict[str, Any]:
    """The stream's first record: session, model, tools, mode, Forge's version."""
    return make_init_record(
        session.session_id,
        session.settings.llm.model,
        [spec.name for spec in session.registry.specs()],
        session.policy.mode.value,
        str(session.workspace),
        sandbox=session.sandbox.state().record() if session.sandbox is not None else None,
    )


def _warn_unconfined(session: Session, writer: OutputWriter) -> None:
    """Say once, on stderr, when the model's commands run unconfined although the sandbox
    was not turned off (no mechanism here; docs/adr/0053)."""
    state = session.sandbox.state() if session.sandbox is not None else None
    if state is None or state.enabled or state.mode == "off":
        return
    if state.refuses:
        writer.write_err(f"forge run: warning: the model's commands are refused: {state.reason}")
    else:
        writer.write_err(f"forge run: warning: the model's commands run unconfined: {state.reason}")


async def _run_until_signal(work: Coroutine[Any, Any, Ending], received: list[int]) -> Ending:
    """Await `work`; SIGINT, SIGTERM or SIGHUP cancel it (its command's group is killed on
    the way out) and raise `CancelledError` with the signal recorded in `received`."""
    task = asyncio.ensure_future(work)
    cancel_task_on_signals(asyncio.get_running_loop(), task, received)
    return await task


async def run_task(
    session: Session,
    task: str,
    writer: OutputWriter,
    *,
    yes: bool,
    time_limit: float | None,
    recorder: RunRecorder | None = None,
    typed: str | None = None,
    images: tuple[ImagePart, ...] = (),
) -> Ending:
    """Drive one turn to its end, answering approvals and questions as a headless client;
    closes the session. Returns how the run ended. `typed`: the task as given, when `task`
    is a custom command's or skill's expansion (the session keeps both; ADR 0048). `images`:
    `--image`'s, sent with the task (docs/adr/0055, part 2)."""
    if recorder is None:
        recorder = _recorder(session, price_table(session.settings.prices))
    reason = "cancelled"
    followers = BackgroundFollowers(session, writer)
    session.servers.subscribe(writer.mcp_notice)  # a failing or crashing server, as it happens
    try:
        async with asyncio.timeout(time_limit):
            await session.servers.wait(MCP_STARTUP_WAIT)  # one turn: list the tools first
            writer.init(init_record(session))
            writer.run_started(
                session.session_id, session.settings.llm.model, str(session.workspace)
            )
            _warn_untrusted(session, writer)
            _warn_unconfined(session, writer)
            async for hook_event in session.start_hooks():  # SessionStart (docs/adr/0043)
                writer.event(hook_event)
            async for event in session.run_turn(task, typed=typed, images=images):
                recorder.observe(event)
                writer.event(event)
                followers.observe(event)  # a background command streams on (ADR 0057)
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
        return ending_for("timeout")
    finally:
        # The run's background commands end with it; say which (docs/adr/0057).
        for line in await asyncio.to_thread(session.end_background, "exit"):
            writer.write_err(f"forge run: {line}")
        await followers.finish()  # each followed command's last lines and its end
        await session.aclose()
    return ending_for(reason)


def headless_decision(yes: bool, protected: str = "") -> ApprovalDecision:
    """Approve with `--yes`; otherwise say no approval is possible (the model reads why). A
    write to Forge's configuration (`protected` says why) is refused unless in auto mode."""
    if protected:
        why = (
            UNCONFINED_REJECTION if protected.startswith(UNCONFINED_PREFIX) else PROTECTED_REJECTION
        )
        return ApprovalDecision(ApprovalVerdict.REJECT, f"{protected}; {why}", unattended=True)
    if yes:
        return ApprovalDecision(ApprovalVerdict.APPROVE_ONCE)
    return ApprovalDecision(ApprovalVerdict.REJECT, HEADLESS_REJECTION, unattended=True)


def _warn_untrusted(session: Session, writer: OutputWriter) -> None:
    """One warning per workspace file whose programs will not start (not trusted), and one
    when the trust store is unusable."""
    trust = session.servers.trust
    if trust is None:
        return
    for source in session.servers.sources():
        status = trust.status(source)
        if source.programs and not trust.permits(source):
            writer.workspace_untrusted(source, status)
    if trust.store_problem:
        writer.write_err(f"forge run: warning: {trust.store_problem}")


def _describer(session: Session) -> Callable[[ToolCall], str]:
    return session.describe_call  # a bad call still gets a line; its error result follows
