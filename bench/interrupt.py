"""Section 6: interrupting a summary of a huge message (issue 20, docs/adr/0036).

`forge --continue run` resumes a session whose last exchange holds a 50 MB user message, so
the first thing the run does is summarize it (counting, chunking, map requests). Once the run
reports the context over budget (its `context_warning` jsonl record) and `DELAY` more seconds
have passed, it gets SIGTERM; the figure is the time from the signal to the process's exit.
The baseline is the same signal to a run of a small session waiting on the server's reply (an
interrupt with nothing heavy under way). Two texts: 50 MB with no boundary at all ("x" only:
character cuts, and one long tiktoken piece) and 50 MB of words with no sentence end.
Median of `RUNS`; the target is ≤ 2 s (the issue measured 28 minutes before the fix). A run
that is still alive `HANG_GUARD` seconds after the signal is a violation.
"""

from __future__ import annotations

import json
import os
import random
import signal
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.measure import format_ratio, format_seconds, median
from bench.results import REPOSITORY, SectionResult, Table
from bench.server_process import ServerProcess

RUNS = 3
DELAY = 1.0
"""Seconds between the context warning and the signal: the summary is under way."""
HANG_GUARD = 60.0
TARGET_SECONDS = 2.0
HUGE_CHARACTERS = 50_000_000
COMMAND = "python -m bench interrupt"


def no_boundary_text() -> str:
    """50 MB with no paragraph, sentence or word boundary."""
    return "x" * HUGE_CHARACTERS


def words_text() -> str:
    """50 MB of six-letter words, no sentence end."""
    generator = random.Random(20)
    vocabulary = ["".join(generator.choices(string.ascii_lowercase, k=6)) for _ in range(4096)]
    words = generator.choices(vocabulary, k=HUGE_CHARACTERS // 7)
    return " ".join(words)


def environment_for(root: Path, base_url: str) -> dict[str, str]:
    environment = dict(os.environ)
    environment.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPOSITORY), environment.get("PYTHONPATH")])),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_CACHE_HOME=str(root / "cache"),
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY="sk-bench-interrupt",
        FORGE_LLM__MODEL="gpt-4o-mini",
        FORGE_LLM__MAX_RETRIES="0",
    )
    return environment


def write_session(root: Path, workspace: Path, huge: str) -> None:
    """A session whose last exchange holds `huge` (written with Forge's own session log)."""
    from forge.agent.history.session_file import SessionStore
    from forge.context.conversation import Conversation
    from forge.llm.messages import assistant, user

    log = SessionStore(root / "data" / "forge" / "sessions").create(workspace, "gpt-4o-mini")
    conversation = Conversation()
    log.attach(conversation)
    conversation.append(user(huge or "hello"))
    conversation.append(assistant("noted"))


def interrupt_seconds(environment: dict[str, str], workspace: Path, wait_for: str) -> float:
    """Seconds from SIGTERM to exit of `forge --continue run`, signalled `DELAY` s after
    its jsonl record of type `wait_for`; raises when the run hangs or exits early."""
    process = subprocess.Popen(
        [sys.executable, "-m", "forge", "--continue", "run", "--output", "jsonl", "go on"],
        cwd=workspace,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if json.loads(line).get("type") == wait_for:
                break
        else:
            raise RuntimeError(f"the run ended before a {wait_for} record: {process.wait()}")
        time.sleep(DELAY)
        if process.poll() is not None:
            raise RuntimeError("the run ended before the signal")
        signalled = time.perf_counter()
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=HANG_GUARD)
        return time.perf_counter() - signalled
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def run() -> SectionResult:
    """One table: the interrupt time per case, with its ratio to the baseline."""
    result = SectionResult("interrupt", "6. Interrupting a summary of a huge message", COMMAND)
    cases: dict[str, tuple[Callable[[], str], str]] = {
        "small session, waiting on the server (baseline)": (lambda: "", "run_started"),
        "50 MB, no boundary": (no_boundary_text, "context_warning"),
        "50 MB of words, no sentence end": (words_text, "context_warning"),
    }
    times: dict[str, float] = {}
    with ServerProcess("summarizer", latency=30.0) as server:
        for name, (make_text, wait_for) in cases.items():
            with tempfile.TemporaryDirectory(prefix="forge-bench-interrupt-") as directory:
                root = Path(directory)
                workspace = root / "workspace"
                workspace.mkdir()
                write_session(root, workspace, make_text())
                environment = environment_for(root, server.base_url)
                samples = []
                for _ in range(RUNS):
                    try:
                        samples.append(interrupt_seconds(environment, workspace, wait_for))
                    except subprocess.TimeoutExpired:
                        result.violations.append(
                            f"{name}: still running {HANG_GUARD:g} s after SIGTERM"
                        )
                        break
                if samples:
                    times[name] = median(samples)
    baseline = times.get("small session, waiting on the server (baseline)")
    table = Table(
        "SIGTERM to exit (median of 3)",
        ("session", "median", "ratio to baseline", f"target ≤ {TARGET_SECONDS:g} s"),
    )
    for name, seconds in times.items():
        ratio = format_ratio(seconds, baseline) if baseline else "-"
        table.rows.append(
            (name, format_seconds(seconds), ratio, "met" if seconds <= TARGET_SECONDS else "missed")
        )
    result.tables.append(table)
    result.notes.append(__doc__.split("\n\n", 1)[1].strip() if __doc__ else "")
    return result
