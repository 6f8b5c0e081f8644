"""Section 4: the TUI in a real terminal (tmux), against a minimal Textual app in the same run.

- Streaming: `bench/fixtures/tui_answer.md` (about 4,000 tokens of markdown: headings, lists,
  tables, fenced code) is streamed at `TOKENS_PER_SECOND` by `bench.server_process` (its own
  process) into the real `forge` app and into `bench.minimal_app`. Measured, in a launch with
  no typing and the screen captured every `RENDER_POLL_SECONDS`: the time from Enter until the
  answer's last line is on screen, divided by the stream's planned duration (tokens / rate) and
  by the time the server actually took to send it (a reader that falls behind slows the
  server down); the app process's CPU over that time (/proc/PID/stat). In a second launch:
  keystroke-to-screen latency of `PROBES` probes typed at fixed intervals during the stream
  (see bench/terminal.py). The probes' 10 ms screen captures cost CPU of their own, which is
  why they no longer share the render launch.
- During a summarization: `forge --resume` on a session holding a corpus trajectory, `/compact`
  with the summarizer taking `SUMMARY_LATENCY` s per request, probed the same way while the
  requests are in flight.
- First screen: from asking tmux to start the process until its ready text shows, forge vs the
  minimal app, median of `FIRST_SCREEN_RUNS` launches each (interleaved; one warm-up each).
  Forge's ready hint is the moment a task typed is handled at once; a third launch checks
  what that means to a user: a task typed as soon as the prompt is drawn, until its request
  reaches the server (it waits for the runtime, then the turn for the tokenizer).
- Resume: `forge --continue` on sessions of 300 and 3,000 `read_file` rounds, until the last
  answer is on screen, against a new session's first frame (`bench/resume.py`).
"""

from __future__ import annotations

import compileall
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from bench.corpus import load_trajectory
from bench.measure import format_ratio, format_seconds, median, percentile
from bench.minimal_app import READY_TEXT
from bench.results import REPOSITORY, SectionResult, Table
from bench.resume import NOTE as RESUME_NOTE
from bench.resume import measure as measure_resume
from bench.server_process import ServerProcess
from bench.terminal import Terminal, probe_keys, process_cpu_seconds, require_tmux
from forge.agent.history.session_file import SessionStore
from forge.context.conversation import Conversation, repair
from forge.llm.tokenizer import get_encoding
from forge.tui.widgets.prompt_input import PLACEHOLDER
from forge.tui.widgets.welcome import READY_HINT

ANSWER_FILE = Path(__file__).resolve().parent / "fixtures" / "tui_answer.md"
LAST_LINE_TEXT = "THE-END-OF-THE-BENCHMARK-ANSWER"
"""The answer's last words: on screen means the whole answer is."""
MODEL = "gpt-4o"
TOKENS_PER_SECOND = 500.0
PROBES = 24
SUMMARY_PROBES = 20
SUMMARY_LATENCY = 5.0
"""Seconds each summary request takes while the keystrokes are probed."""
SUMMARY_PROBE_INTERVAL = 0.15
FIRST_SCREEN_RUNS = 5
WIDTH, HEIGHT = 120, 40
RENDER_DEADLINE = 180.0
RENDER_POLL_SECONDS = 0.05
"""Screen captures while timing the render: each is a tmux subprocess, so polling as fast as
the keystroke probes do takes CPU from the app being measured."""
START_DEADLINE = 60.0
NO_GAUGE = " / 0 tokens"
"""forge's context gauge before its first count (no window yet)."""
SETTLE_SECONDS = 1.0
"""Before the streaming launches type their prompt: what an app still does in the background
after its ready text (forge: the tokenizer, the context-window probes; docs/adr/0042) ends
first, so the render and the keystrokes time the stream alone. The start-up rows time it."""
FORGE_READY = READY_HINT.split(".")[0].replace("**", "")
"""The welcome's first sentence: forge's first screen is up."""
FORGE_PROMPT = PLACEHOLDER.split("(")[0].strip()
"""The prompt's placeholder: a resumed forge is up."""

COMMAND = "python -m bench tui"


@dataclass
class StreamRun:
    """One app streaming the answer: render time, CPU and keystroke latencies."""

    render_seconds: float
    cpu_seconds: float
    server_seconds: float
    """How long the server took to send the answer (its last paced stream)."""
    latencies: list[float]
    timeouts: int


class Sandbox:
    """Temporary XDG directories, a workspace and a config file pointing forge at a server."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.workspace = root / "workspace"
        self.workspace.mkdir()
        self.cache = root / "cache"
        self.cache.mkdir()

    def environment(self, base_url: str, name: str) -> dict[str, str]:
        """The environment for one launch: its own config/data/state, the shared cache (so the
        tokenizer data is extracted once, as on a user's machine)."""
        home = self.root / name
        config = home / "config" / "forge"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.yaml").write_text(
            f"llm:\n  model: {MODEL}\n  base_url: {base_url}\n  max_retries: 0\n",
            encoding="utf-8",
        )
        return {
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_STATE_HOME": str(home / "state"),
            "XDG_CACHE_HOME": str(self.cache),
            "HOME": str(home),
            "OPENAI_API_KEY": "sk-bench-dummy-key",
            "PYTHONPATH": str(REPOSITORY),
            "TERM": "xterm-256color",
            "PATH": os.environ.get("PATH", ""),
        }


def compile_bytecode(
    root: Path = REPOSITORY, packages: tuple[str, ...] = ("forge", "bench")
) -> None:
    """Write the bytecode of `packages` under `root` (what installing a wheel does), so every
    launch times a start as users have it: without it, a shell with PYTHONDONTWRITEBYTECODE
    set (the tmux server inherits it) compiled all of forge's source at every launch, about
    0.2 s of CPU that the minimal app (one small file) hardly paid."""
    for package in packages:
        if not compileall.compile_dir(root / package, quiet=2):
            raise RuntimeError(f"{root / package} does not compile")


def forge_command(workspace: Path, *extra: str) -> str:
    """The shell command running forge on `workspace`."""
    return " ".join([sys.executable, "-m", "forge", "--workspace", str(workspace), *extra])


def minimal_command(base_url: str) -> str:
    """The shell command running the minimal app against `base_url`."""
    return f"{sys.executable} -m bench.minimal_app --base-url {base_url} --model {MODEL}"


def stream_seconds() -> tuple[int, float]:
    """The answer's tokens (o200k_base) and how long the server takes to stream them."""
    tokens = len(get_encoding("o200k_base").encode(ANSWER_FILE.read_text(encoding="utf-8")))
    return tokens, tokens / TOKENS_PER_SECOND


def stream_into(
    command: str,
    environment: dict[str, str],
    cwd: Path,
    ready: str,
    duration: float,
    keys: str,
    server: ServerProcess,
) -> StreamRun:
    """Launch `command` twice: once to time the answer's render untouched, once to probe
    keystrokes while it streams."""
    with Terminal(WIDTH, HEIGHT) as terminal:
        entered = _send_prompt(terminal, command, environment, cwd, ready)
        pid = terminal.pid()
        cpu_before = process_cpu_seconds(pid)
        shown_at, _ = terminal.wait_for(
            lambda screen: LAST_LINE_TEXT in screen, RENDER_DEADLINE, poll=RENDER_POLL_SECONDS
        )
        render = shown_at - entered
        cpu = process_cpu_seconds(pid) - cpu_before
    server_seconds = server.stats()["last_stream_milliseconds"] / 1000
    with Terminal(WIDTH, HEIGHT) as terminal:
        entered = _send_prompt(terminal, command, environment, cwd, ready)
        result = terminal.probe(
            keys,
            interval=duration / PROBES,
            deadline=entered + RENDER_DEADLINE,
            watch=lambda screen: LAST_LINE_TEXT in screen,
        )
        if result.watched_at is None:
            raise TimeoutError(
                f"the answer's last line never showed within {RENDER_DEADLINE:.0f} s; last "
                f"screen:\n{terminal.capture()}"
            )
    return StreamRun(render, cpu, server_seconds, result.latencies, result.timeouts)


def _send_prompt(
    terminal: Terminal, command: str, environment: dict[str, str], cwd: Path, ready: str
) -> float:
    """Launch `command`, wait for `ready`, type the prompt and press Enter; monotonic() of
    the Enter."""
    terminal.launch(command, environment, cwd)
    # forge's gauge reads "0 / 0 tokens" until the tokenizer is in and the conversation counted.
    terminal.wait_for(lambda screen: ready in screen and NO_GAUGE not in screen, START_DEADLINE)
    time.sleep(SETTLE_SECONDS)
    terminal.type("Explain the fix")
    terminal.wait_for(lambda screen: "Explain the fix" in screen, START_DEADLINE)
    entered = time.monotonic()
    terminal.press("Enter")
    return entered


def write_session(sandbox_environment: dict[str, str], workspace: Path) -> str:
    """A saved session holding the ponyc trajectory; its id."""
    store = SessionStore(Path(sandbox_environment["XDG_DATA_HOME"]) / "forge" / "sessions")
    log = store.create(workspace, MODEL)
    conversation = Conversation()
    log.attach(conversation)
    for message in repair(load_trajectory()):
        conversation.append(message)
    if not log.started:
        raise RuntimeError("the benchmark session was not written")
    return log.id


def probe_during_summary(sandbox: Sandbox, keys: str) -> tuple[list[float], int, int]:
    """forge resumed on a corpus session, /compact with a slow summarizer: keystroke latencies,
    timeouts, and the summary requests in flight when the last probe was typed."""
    with ServerProcess(mode="summarizer", latency=SUMMARY_LATENCY) as server:
        environment = sandbox.environment(server.base_url, "forge-summary")
        session = write_session(environment, sandbox.workspace)
        with Terminal(WIDTH, HEIGHT) as terminal:
            terminal.launch(
                forge_command(sandbox.workspace, "--resume", session),
                environment,
                sandbox.workspace,
            )
            terminal.wait_for(lambda screen: FORGE_PROMPT in screen, START_DEADLINE)
            server.reset_stats()
            terminal.type("/compact")
            terminal.wait_for(lambda screen: "/compact" in screen, START_DEADLINE)
            terminal.press("Enter")
            # Probe only once the summarizer has the requests.
            end = time.monotonic() + START_DEADLINE
            while server.stats()["in_flight"] == 0 and time.monotonic() < end:
                time.sleep(0.02)
            result = terminal.probe(
                keys,
                interval=SUMMARY_PROBE_INTERVAL,
                deadline=time.monotonic() + RENDER_DEADLINE,
            )
            in_flight = server.stats()["in_flight"]
    return result.latencies, result.timeouts, in_flight


@dataclass
class FirstScreens:
    """Median seconds from process start to each moment of `first_screens`."""

    forge: float
    """forge's first screen: its prompt is drawn (as the minimal app's input is)."""
    ready: float
    """forge ready for a task: its ready hint (settings, provider and session loaded)."""
    task_sent: float
    """A task typed as soon as forge's prompt is drawn: its request reaches the server."""
    minimal: float
    """The minimal app's first screen."""


def first_screens(sandbox: Sandbox, server: ServerProcess) -> FirstScreens:
    """Launch forge (twice: once untouched, once typing a task at once) and the minimal app,
    interleaved, `FIRST_SCREEN_RUNS` times after one warm-up each; the medians."""
    times: dict[str, list[float]] = {"forge": [], "ready": [], "task": [], "minimal": []}
    for number in range(FIRST_SCREEN_RUNS + 1):
        for app in ("forge", "forge-task", "minimal"):
            environment = sandbox.environment(server.base_url, f"{app}-start-{number}")
            command = (
                minimal_command(server.base_url)
                if app == "minimal"
                else forge_command(sandbox.workspace)
            )
            with Terminal(WIDTH, HEIGHT) as terminal:
                started = terminal.launch(command, environment, sandbox.workspace)
                first = READY_TEXT if app == "minimal" else FORGE_PROMPT
                shown, _ = terminal.wait_for(partial(contains, text=first), START_DEADLINE)
                if app == "forge":
                    ready, _ = terminal.wait_for(
                        partial(contains, text=FORGE_READY), START_DEADLINE
                    )
                elif app == "forge-task":
                    sent = _task_sent_at(terminal, server)
                    streaming = terminal.pid()
            if app == "forge-task":  # mid-turn: let it finish exiting before the next launch
                _wait_exited(streaming)
            if number == 0:  # the first launch of each warms the file cache
                continue
            if app == "forge":
                times["forge"].append(shown - started)
                times["ready"].append(ready - started)
            elif app == "forge-task":
                times["task"].append(sent - started)
            else:
                times["minimal"].append(shown - started)
    return FirstScreens(
        median(times["forge"]),
        median(times["ready"]),
        median(times["task"]),
        median(times["minimal"]),
    )


def _wait_exited(pid: int, limit: float = 10.0) -> None:
    """Wait until process `pid` is gone (at most `limit` seconds)."""
    end = time.monotonic() + limit
    while Path(f"/proc/{pid}").exists() and time.monotonic() < end:
        time.sleep(0.02)


def _task_sent_at(terminal: Terminal, server: ServerProcess) -> float:
    """Type a task and press Enter; monotonic() when the server has its request."""
    before = server.stats()["requests"]
    terminal.type("Explain the fix")
    terminal.wait_for(lambda screen: "Explain the fix" in screen, START_DEADLINE)
    terminal.press("Enter")
    end = time.monotonic() + START_DEADLINE
    while time.monotonic() < end:
        if server.stats()["requests"] > before:
            return time.monotonic()
        time.sleep(0.01)
    raise TimeoutError(f"the task's request never reached the server:\n{terminal.capture()}")


def contains(screen: str, text: str) -> bool:
    """Whether `text` is on `screen`."""
    return text in screen


def _latency_cells(latencies: list[float], timeouts: int) -> tuple[str, str, str]:
    return (
        format_seconds(median(latencies)),
        format_seconds(percentile(latencies, 0.95)),
        f"{len(latencies)} ({timeouts} never shown)" if timeouts else str(len(latencies)),
    )


def run() -> SectionResult:
    """Measure forge and the minimal app; one table per measure."""
    require_tmux()
    compile_bytecode()
    tokens, duration = stream_seconds()
    screen_texts = [ANSWER_FILE.read_text(encoding="utf-8"), READY_HINT, PLACEHOLDER]
    keys = probe_keys(PROBES, avoid=screen_texts)
    summary_keys = probe_keys(SUMMARY_PROBES, avoid=screen_texts, seed=1)
    result = SectionResult("tui", "4. The TUI", COMMAND)
    with tempfile.TemporaryDirectory(prefix="forge-bench-tui-") as directory:
        sandbox = Sandbox(Path(directory))
        with ServerProcess(
            mode="stream", text_file=ANSWER_FILE, tokens_per_second=TOKENS_PER_SECOND
        ) as server:
            minimal = stream_into(
                minimal_command(server.base_url),
                sandbox.environment(server.base_url, "minimal-stream"),
                sandbox.workspace,
                READY_TEXT,
                duration,
                keys,
                server,
            )
            forge = stream_into(
                forge_command(sandbox.workspace),
                sandbox.environment(server.base_url, "forge-stream"),
                sandbox.workspace,
                FORGE_READY,
                duration,
                keys,
                server,
            )
            screens = first_screens(sandbox, server)
            resume, resume_violations = measure_resume(
                partial(sandbox.environment, server.base_url),
                sandbox.workspace,
                forge_command(sandbox.workspace),
                forge_command(sandbox.workspace, "--continue"),
                FORGE_PROMPT,
                (WIDTH, HEIGHT),
                START_DEADLINE,
            )
        summary_latencies, summary_timeouts, in_flight = probe_during_summary(sandbox, summary_keys)
    render = Table(
        f"Streaming a {tokens:,}-token markdown answer at {TOKENS_PER_SECOND:.0f} tokens/s "
        f"({duration:.2f} s)",
        (
            "app",
            "Enter to last line",
            "/ planned stream",
            "/ server's actual stream",
            "/ minimal app's",
            "CPU (share of a core)",
        ),
    )
    for name, run_ in (("minimal Textual app (floor)", minimal), ("forge", forge)):
        render.rows.append(
            (
                name,
                format_seconds(run_.render_seconds),
                format_ratio(run_.render_seconds, duration),
                format_ratio(run_.render_seconds, run_.server_seconds),
                format_ratio(run_.render_seconds, minimal.render_seconds),
                f"{run_.cpu_seconds / run_.render_seconds:.0%}",
            )
        )
    minimal_p95 = percentile(minimal.latencies, 0.95)
    keystrokes = Table(
        "Keystroke to screen",
        ("app, while", "median", "p95", "probes", "p95 / minimal app's p95"),
    )
    keystrokes.rows.append(
        (
            "minimal app, streaming (floor)",
            *_latency_cells(minimal.latencies, minimal.timeouts),
            "1.00x",
        )
    )
    keystrokes.rows.append(
        (
            "forge, streaming",
            *_latency_cells(forge.latencies, forge.timeouts),
            format_ratio(percentile(forge.latencies, 0.95), minimal_p95),
        )
    )
    keystrokes.rows.append(
        (
            "forge, summarizing (/compact)",
            *_latency_cells(summary_latencies, summary_timeouts),
            format_ratio(percentile(summary_latencies, 0.95), minimal_p95),
        )
    )
    start = Table(
        f"Process start to first screen (median of {FIRST_SCREEN_RUNS})",
        ("app", "median", "/ minimal app's"),
    )
    minimal_start = screens.minimal
    start.rows.append(("minimal Textual app (floor)", format_seconds(minimal_start), "1.00x"))
    for name, seconds in (
        ("forge", screens.forge),
        ("forge, ready for a task", screens.ready),
        ("forge, a task typed at its first screen reaches the server", screens.task_sent),
    ):
        start.rows.append((name, format_seconds(seconds), format_ratio(seconds, minimal_start)))
    result.tables += [render, keystrokes, start, resume]
    result.violations += resume_violations
    if in_flight == 0:
        result.violations.append(
            "the /compact probes outlasted the summary requests: that row does not measure "
            "typing during a summarization"
        )
    result.notes.append(
        f"A {WIDTH}x{HEIGHT} tmux pane per launch; each app reads the same server "
        "(bench/server_process.py, stream mode, its own process, one token per event). Render "
        "time (a launch with no typing, screen captured every "
        f"{RENDER_POLL_SECONDS * 1000:.0f} ms) runs from pressing Enter to the first capture "
        f"showing the answer's last line; the planned stream is tokens / "
        f"{TOKENS_PER_SECOND:.0f}, the server's actual stream is the time it took to send "
        "every event to that app (longer when the app reads slowly); each app is left "
        f"{SETTLE_SECONDS:.0f} s after its ready text (and forge's first context count) before "
        "the prompt is typed. CPU is the "
        "app process's "
        "user+system time over that span. Keystroke probes (a second launch): a marker, then "
        f"one character every duration/{PROBES} s while streaming ({PROBES} probes), each "
        "timed from `send-keys` to "
        "the first capture showing it (screen polled every ~10 ms plus capture time). During "
        f"a summarization: forge resumed on the ponyc trajectory session, /compact, the "
        f"summarizer taking {SUMMARY_LATENCY:.0f} s per request; {SUMMARY_PROBES} probes every "
        f"{SUMMARY_PROBE_INTERVAL} s once the first summary request is in flight. First screen: "
        "from asking tmux to start the process until the app's ready text (forge's welcome, the "
        "minimal app's placeholder) shows; each app launched once to warm the caches first "
        "(and the bytecode of forge and bench/ written before any launch, as an install "
        "does). "
        "A task typed at forge's first screen: another launch, the task typed as soon as the "
        "prompt is drawn, until the server has its request. "
        "Issue 10's targets: render <= 1.15x the stream, keystroke p95 while streaming <= 3x "
        "the minimal app's, first screen <= 1.6x the minimal app's."
    )
    result.notes.append(RESUME_NOTE)
    return result
