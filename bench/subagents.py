"""Section 8: subagents. N `task` calls in one reply, each child taking L seconds (the server's
latency on the child's model), must finish in about ceil(N / max_parallel) * L.

A real `Session` (`build_session`, the same wiring as the TUI and `forge run`) runs one turn
against the loopback server (`tests/support/openai_server.py`, in a thread: the children only
wait on the server's latency, so sharing the GIL costs little next to L): the parent's first
reply holds N `task` calls, each child's one request answers after L seconds, the parent's
second reply ends the turn. Measured: from the first `task` call's start to the last one's
result (the batch, not the parent's own requests), the median of `RUNS` runs, and its ratio
to the limit ceil(N / c) * L (target <= 1.15). The peak of requests in flight on the child's
model must never exceed c = `agents.max_parallel` (a violation fails the run).
"""

from __future__ import annotations

import asyncio
import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.measure import format_ratio, format_seconds, median
from bench.results import SectionResult, Table
from forge.agent.events import ApprovalRequested, ToolCallFinished, ToolCallStarted
from forge.config.ephemeral import set_ephemeral
from forge.config.settings import Settings
from forge.session.build import SessionOptions, build_session
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Reply, Text, ToolCalls

PARENT_MODEL = "bench-parent"
CHILD_MODEL = "bench-child"
LATENCY = 0.5
"""Seconds each child's request takes."""
RUNS = 3
CASES = ((1, 4), (4, 4), (8, 4), (12, 4), (8, 8))
"""(N children, max_parallel c)."""
TARGET = 1.15
COMMAND = "python -m bench subagents"


def limit_seconds(children: int, parallel: int, latency: float) -> float:
    """The fastest the batch can be: ceil(N / c) waves of one latency each."""
    return math.ceil(children / parallel) * latency


def responder(children: int) -> object:
    """The server's answers: the parent asks for `children` tasks, then ends; a child reports
    after `LATENCY` seconds."""

    def reply(request: RecordedRequest) -> Reply:
        if request.model == CHILD_MODEL:
            return Text("report: nothing unusual found", delay=LATENCY)
        if request.messages[-1]["role"] == "user":
            calls = [
                Call("task", {"agent": "worker", "prompt": f"look at part {n}"}, id=f"t{n}")
                for n in range(children)
            ]
            return ToolCalls(calls)
        return Text("all parts reported")

    return reply


@dataclass
class Case:
    """One measured (N, c) case."""

    children: int
    parallel: int
    seconds: float
    peak_in_flight: int
    reported: int


async def run_once(server: OpenAIServer, workspace: Path, parallel: int) -> tuple[float, int]:
    """One turn: (seconds from the first task call's start to the last one's result, results)."""
    settings = Settings.model_validate(
        {
            "llm": {"base_url": server.base_url, "api_key": "bench-key", "model": PARENT_MODEL},
            "agents": {"max_parallel": parallel},
        }
    )
    session = build_session(settings, workspace, SessionOptions(approve_all=True))
    started: float | None = None
    ended = 0.0
    reported = 0
    try:
        async for event in session.run_turn("look at every part"):
            if isinstance(event, ToolCallStarted) and event.call.name == "task" and not started:
                started = time.perf_counter()
            elif isinstance(event, ToolCallFinished) and event.call.name == "task":
                ended = time.perf_counter()
                reported += '"completed": true' in event.result
            elif isinstance(event, ApprovalRequested):
                raise RuntimeError("a child asked for approval in auto mode")
    finally:
        await session.aclose()
    return ended - (started or ended), reported


def measure(server: OpenAIServer, workspace: Path, children: int, parallel: int) -> Case:
    """`RUNS` turns of one case: the median batch time and the highest peak seen."""
    seconds: list[float] = []
    peak = reported = 0
    for _ in range(RUNS):
        server.reset()
        server.responder = responder(children)  # type: ignore[assignment]
        run_seconds, reported = asyncio.run(run_once(server, workspace, parallel))
        seconds.append(run_seconds)
        child_requests = server.requests_for(CHILD_MODEL)
        peak = max(peak, peak_in_flight(child_requests))
    return Case(children, parallel, median(seconds), peak, reported)


def peak_in_flight(requests: list[RecordedRequest]) -> int:
    """The most requests in flight at once, from their start and end times."""
    edges = sorted(
        [(request.started_at, 1) for request in requests]
        + [(request.finished_at or request.started_at, -1) for request in requests]
    )
    peak = current = 0
    for _, step in edges:
        current += step
        peak = max(peak, current)
    return peak


def run() -> SectionResult:
    """Measure every case; a peak above c, a missing report or a ratio above the target is a
    violation."""
    table = Table(
        f"N children of L = {LATENCY} s each; limit = ceil(N/c) * L",
        ("N", "c", "median batch", "limit", "/ limit", "sequential N*L", "peak in flight"),
    )
    result = SectionResult("subagents", "8. Subagents", COMMAND, [table])
    set_ephemeral()  # no session files or checkpoints are written by the benchmark
    server = OpenAIServer().start()
    try:
        with tempfile.TemporaryDirectory() as directory:
            workspace = Path(directory)
            agents = workspace / ".forge" / "agents"
            agents.mkdir(parents=True)
            (agents / "worker.md").write_text(
                f"---\nname: worker\ndescription: looks at one part\nmodel: {CHILD_MODEL}\n---\n"
                "Look at the part you are given and report.\n",
                encoding="utf-8",
            )
            for children, parallel in CASES:
                case = measure(server, workspace, children, parallel)
                _add_row(table, case, result)
    finally:
        server.stop()
        set_ephemeral(False)
    result.notes.append(
        "A real session (build_session) on the loopback server in a thread; the parent's first "
        "reply holds N task calls, each child's single request answers after L seconds. The "
        "batch is timed from the first task call's start to the last task result, median of "
        f"{RUNS} runs; peak = the most child requests the server had in flight at once."
    )
    return result


def _add_row(table: Table, case: Case, result: SectionResult) -> None:
    limit = limit_seconds(case.children, case.parallel, LATENCY)
    table.rows.append(
        (
            str(case.children),
            str(case.parallel),
            format_seconds(case.seconds),
            format_seconds(limit),
            format_ratio(case.seconds, limit),
            format_seconds(case.children * LATENCY),
            str(case.peak_in_flight),
        )
    )
    name = f"N={case.children}, c={case.parallel}"
    if case.peak_in_flight > case.parallel:
        result.violations.append(f"{name}: {case.peak_in_flight} children in flight, above c")
    if case.reported != case.children:
        result.violations.append(f"{name}: {case.reported} of {case.children} children reported")
    if case.seconds > TARGET * limit:
        result.violations.append(
            f"{name}: the batch took {case.seconds:.2f} s, above {TARGET} x the limit {limit:.2f} s"
        )


if __name__ == "__main__":
    print(run().report())
