"""Part of section 4 (the TUI): resuming a long session (issue 18, item 3; docs/adr/0032).

A session of N `read_file` rounds (N = `ROUNDS`: a user message, N assistant calls each with
a 40-line file's content as its result, then a `task_completion` whose result ends in
`ANSWER_MARK`) is written with Forge's own `SessionLog`. `forge --continue` opens it in a
`WIDTH`x`HEIGHT` tmux pane; measured: from asking tmux to start the process until the last
answer is on screen. The baseline, in the same run and interleaved with it: a new session's
first frame (forge with no session, until its prompt is drawn). Median of `RUNS` launches each,
after one warm-up launch each. Issue 18's target: at most 1.5x the baseline, whatever N.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.measure import format_ratio, format_seconds, median
from bench.results import Table
from bench.terminal import Terminal
from forge.agent.history.session_file import SessionStore
from forge.context.conversation import Conversation
from forge.llm.messages import Message, ToolCall, assistant, tool_result, user

ROUNDS = (300, 3_000)
RUNS = 5
ANSWER_MARK = "RESUME-BENCH-LAST-ANSWER"
"""The last answer's last words: on screen means the resumed session is shown."""
TARGET_RATIO = 1.5
NOTE = (
    "Resume: sessions of 300 and 3,000 read_file rounds (each a 40-line file's content), "
    "ended by task_completion, written with Forge's SessionLog; `forge --continue` launched "
    "until the last answer is on screen, interleaved with a new session's launch until its "
    f"prompt is drawn (the baseline); median of {RUNS} launches each after one warm-up. "
    f"Issue 18's target: at most {TARGET_RATIO}x the baseline, whatever the length."
)
FILE_LINES = 40


def file_text(number: int) -> str:
    """The content of the `number`th file the session reads (a plausible source file)."""
    return "\n".join(
        f"{line:>4}  def function_{number}_{line}(value):  return value * {line}"
        for line in range(1, FILE_LINES + 1)
    )


def session_messages(rounds: int) -> list[Message]:
    """A finished turn of `rounds` read_file calls ending with `task_completion`."""
    messages: list[Message] = [user(f"Read the {rounds} files one by one and summarize them.")]
    for number in range(rounds):
        call = ToolCall(
            f"call_{number}", "read_file", json.dumps({"path": f"src/module_{number}.py"})
        )
        messages += [assistant("", (call,)), tool_result(call, file_text(number))]
    answer = f"Read all {rounds} files: each defines {FILE_LINES} functions. {ANSWER_MARK}"
    finish = ToolCall("call_finish", "task_completion", json.dumps({"result": answer}))
    messages += [assistant("", (finish,)), tool_result(finish, answer)]
    return messages


def write_long_session(sessions: Path, workspace: Path, model: str, rounds: int) -> str:
    """Write the `rounds`-round session under `sessions` for `workspace`; its id."""
    log = SessionStore(sessions).create(workspace, model)
    conversation = Conversation()
    log.attach(conversation)
    for message in session_messages(rounds):
        conversation.append(message)
    if not log.started:
        raise RuntimeError("the benchmark session was not written")
    return log.id


def contains(screen: str, text: str) -> bool:
    """Whether `text` is on `screen`."""
    return text in screen


def time_to_screen(
    command: str,
    environment: dict[str, str],
    cwd: Path,
    shown: str,
    size: tuple[int, int],
    deadline: float,
) -> float:
    """Seconds from asking tmux to start `command` until `shown` is on its screen. The app
    is then ended and waited for, so it does not share the CPU with the next launch."""
    with Terminal(*size) as terminal:
        started = terminal.launch(command, environment, cwd)
        pid = terminal.pid()
        at, _ = terminal.wait_for(partial(contains, text=shown), deadline)
    wait_for_exit(pid, deadline)
    return at - started


def wait_for_exit(pid: int, timeout: float) -> None:
    """Wait until process `pid` has ended (its tmux server was killed), at most `timeout` s."""
    end = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists() and time.monotonic() < end:
        time.sleep(0.05)


def measure(
    environment_for: Callable[[str], dict[str, str]],
    workspace: Path,
    new_session_command: str,
    resume_command: str,
    prompt_text: str,
    size: tuple[int, int],
    deadline: float,
) -> tuple[Table, list[str]]:
    """Write a session of each length in `ROUNDS` (each in its own launch environment from
    `environment_for(name)`), then launch, interleaved, a new session (until `prompt_text`)
    and `resume_command` on each session (until `ANSWER_MARK`), `RUNS` + 1 times (the first
    round warms the caches and is not counted)."""
    environments = {rounds: environment_for(f"resume-{rounds}") for rounds in ROUNDS}
    for rounds, environment in environments.items():
        sessions = Path(environment["XDG_DATA_HOME"]) / "forge" / "sessions"
        write_long_session(sessions, workspace, environment_model(environment), rounds)
    new_session: list[float] = []
    resumed: dict[int, list[float]] = {rounds: [] for rounds in ROUNDS}
    for number in range(RUNS + 1):
        fresh = environment_for(f"resume-new-{number}")
        seconds = time_to_screen(new_session_command, fresh, workspace, prompt_text, size, deadline)
        if number:
            new_session.append(seconds)
        for rounds, environment in environments.items():
            seconds = time_to_screen(
                resume_command, environment, workspace, ANSWER_MARK, size, deadline
            )
            if number:
                resumed[rounds].append(seconds)
    return resume_table(new_session, resumed)


def environment_model(environment: dict[str, str]) -> str:
    """The model the launch environment's config names (the session is recorded on it)."""
    config = Path(environment["XDG_CONFIG_HOME"]) / "forge" / "config.yaml"
    for line in config.read_text(encoding="utf-8").splitlines():
        if line.strip().startswith("model:"):
            return line.split(":", 1)[1].strip()
    return "gpt-4o"


def resume_table(
    new_session: list[float], resumed: dict[int, list[float]]
) -> tuple[Table, list[str]]:
    """The table of medians and ratios, and the violations of the 1.5x target."""
    baseline = median(new_session)
    table = Table(
        f"Resuming a long session: process start to its last answer on screen (median of {RUNS})",
        ("session", "median", "/ a new session's first frame"),
    )
    table.rows.append(("new session, first frame (baseline)", format_seconds(baseline), "1.00x"))
    violations = []
    for rounds, times in resumed.items():
        seconds = median(times)
        table.rows.append(
            (
                f"--continue, {rounds:,} read_file rounds",
                format_seconds(seconds),
                format_ratio(seconds, baseline),
            )
        )
        if seconds > TARGET_RATIO * baseline:
            violations.append(
                f"resuming {rounds:,} rounds took {seconds / baseline:.2f}x a new session's "
                f"first frame (target <= {TARGET_RATIO}x)"
            )
    return table, violations
