"""Section 6: a CI fleet. `FLEET` concurrent `forge run` processes against one loopback server
(`bench.server_process`, stream mode, in its own process): once sharing one home (sessions,
logs, caches all in the same XDG directories), once with `--ephemeral`.

Every run must exit 0 with a `success` result, the shared home must hold one session per run,
and the ephemeral fleet must leave its home and `$TMPDIR` exactly as they were. The wall time
of each fleet is compared with the limit 1.5 * one run's time * ceil(FLEET / cores) (one run: the
median of `RUNS` runs alone, measured in the same section); a fleet over its limit, or any
failed run, is a violation.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.measure import format_ratio, format_seconds, median
from bench.results import REPOSITORY, SectionResult, Table
from bench.server_process import ServerProcess

FLEET = 30
RUNS = 3
"""Lone runs whose median is the one-run time."""
LIMIT_FACTOR = 1.5
LATENCY = 0.5
"""Seconds the server waits before it streams (a model's time to the first token)."""
ANSWER = "The fleet check passed: every run answered. " * 20
COMMAND = "python -m bench fleet"
_DIRECTORIES = ("home", "config", "data", "state", "cache", "tmp")


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def limit_seconds(one_run: float, fleet: int, cpu_count: int) -> float:
    """The fleet's limit: 1.5 * one run * ceil(fleet / cores)."""
    return LIMIT_FACTOR * one_run * math.ceil(fleet / max(1, cpu_count))


def make_roots(base: Path) -> Path:
    """HOME, the XDG directories and TMPDIR for a fleet, under `base`."""
    for name in _DIRECTORIES:
        (base / name).mkdir(parents=True, exist_ok=True)
    return base


def environment(roots: Path, base_url: str) -> dict[str, str]:
    """A `forge run` environment whose every writable place is under `roots`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "OPENAI_"))}
    env.pop("TIKTOKEN_CACHE_DIR", None)  # as a user has it: tiktoken's copy goes to $TMPDIR
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPOSITORY), env.get("PYTHONPATH")])),
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY="sk-bench-fleet",
        FORGE_LLM__MAX_RETRIES="0",
        HOME=str(roots / "home"),
        XDG_CONFIG_HOME=str(roots / "config"),
        XDG_DATA_HOME=str(roots / "data"),
        XDG_STATE_HOME=str(roots / "state"),
        XDG_CACHE_HOME=str(roots / "cache"),
        TMPDIR=str(roots / "tmp"),
    )
    return env


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under `root` with its size and modification time."""
    return {
        str(path.relative_to(root)): (path.lstat().st_size, path.lstat().st_mtime_ns)
        for path in root.rglob("*")
    }


@dataclass
class FleetOutcome:
    """What one fleet did."""

    runs: int
    succeeded: int
    seconds: float
    problems: list[str]


def forge_command(*extra: str) -> list[str]:
    """`forge run` with a json result (the same interpreter as the bench)."""
    return [sys.executable, "-m", "forge", "run", "--output-format", "json", *extra, "go"]


def _succeeded(completed: tuple[int, str, str]) -> str | None:
    """None for a run that exited 0 with a success result, else what went wrong."""
    code, out, err = completed
    try:
        subtype = json.loads(out).get("subtype") if out.strip() else None
    except ValueError:
        subtype = None
    if code == 0 and subtype == "success":
        return None
    return f"exit {code}, result {subtype!r}: {err.strip()[-300:]}"


def run_fleet(size: int, env: dict[str, str], workspace: Path, *extra: str) -> FleetOutcome:
    """Start `size` runs at once and wait for all; the wall time from the first spawn."""
    started = time.perf_counter()
    processes = [
        subprocess.Popen(
            forge_command(*extra),
            cwd=workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(size)
    ]
    finished = []
    for process in processes:
        out, err = process.communicate(timeout=600)
        finished.append((process.returncode, out, err))
    seconds = time.perf_counter() - started
    problems = [p for p in map(_succeeded, finished) if p is not None]
    return FleetOutcome(size, size - len(problems), seconds, problems)


def measure(fleet: int = FLEET, runs: int = RUNS) -> SectionResult:
    """The section: one run alone, then the shared-home and the ephemeral fleets."""
    result = SectionResult("fleet", "6. Fleet: concurrent forge run", COMMAND)
    cpu_count = cores()
    with tempfile.TemporaryDirectory(prefix="forge-fleet-") as scratch:
        base = Path(scratch)
        answer = base / "answer.md"
        answer.write_text(ANSWER, encoding="utf-8")
        workspace = base / "workspace"
        workspace.mkdir()
        with ServerProcess(
            "stream", latency=LATENCY, text_file=answer, tokens_per_second=2000
        ) as server:
            lone_env = environment(make_roots(base / "lone"), server.base_url)
            lone = [run_fleet(1, lone_env, workspace) for _ in range(runs)]
            for outcome in lone:
                result.violations += [f"a lone run failed: {p}" for p in outcome.problems]
            one_run = median([outcome.seconds for outcome in lone])
            limit = limit_seconds(one_run, fleet, cpu_count)
            shared_roots = make_roots(base / "shared")
            shared = run_fleet(fleet, environment(shared_roots, server.base_url), workspace)
            sessions = list((shared_roots / "data" / "forge" / "sessions").glob("*.jsonl"))
            if len(sessions) != fleet:
                result.violations.append(
                    f"the shared home holds {len(sessions)} sessions for {fleet} runs"
                )
            ephemeral_roots = make_roots(base / "ephemeral")
            before = tree(ephemeral_roots)
            ephemeral = run_fleet(
                fleet, environment(ephemeral_roots, server.base_url), workspace, "--ephemeral"
            )
            if tree(ephemeral_roots) != before:
                changed = sorted(set(tree(ephemeral_roots)) ^ set(before))[:5]
                result.violations.append(f"--ephemeral runs wrote files: {changed}")
    table = Table(
        f"{fleet} concurrent runs on {cpu_count} core(s) (limit: {LIMIT_FACTOR} * one run * "
        f"ceil({fleet}/{cpu_count}) = {format_seconds(limit)})",
        ("case", "succeeded", "wall time", "ratio to one run", "ratio to limit"),
    )
    table.rows.append(
        (
            f"one run alone (median of {runs})",
            f"{runs}/{runs}",
            format_seconds(one_run),
            format_ratio(one_run, one_run),
            "",
        )
    )
    for name, outcome in (("shared home", shared), ("--ephemeral", ephemeral)):
        table.rows.append(
            (
                name,
                f"{outcome.succeeded}/{outcome.runs}",
                format_seconds(outcome.seconds),
                format_ratio(outcome.seconds, one_run),
                format_ratio(outcome.seconds, limit),
            )
        )
        result.violations += [f"{name}: {problem}" for problem in outcome.problems[:3]]
        if outcome.seconds > limit:
            result.violations.append(
                f"{name}: {format_seconds(outcome.seconds)} is over the limit "
                f"{format_seconds(limit)}"
            )
    result.tables.append(table)
    result.notes.append(
        f"Server: bench.server_process in stream mode, {LATENCY:g} s to the first token; each "
        "run answers once (one request). The shared home ends with one session per run; the "
        "ephemeral fleet's home and $TMPDIR are compared file by file before and after."
    )
    return result


def run() -> SectionResult:
    """Section 6 as `make bench` runs it."""
    return measure()
