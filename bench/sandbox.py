"""Section 9: what the sandbox adds to a command's start-up (issue 39, docs/adr/0053).

`execute_command` runs `true` through the real tool in one session, confined (bubblewrap, the
session's network namespace and pids cgroup already made by a first command) and unconfined
(the same session's sandbox with `mode: off`, so the environment is scrubbed the same way);
the figure is the median wall time of a call, spawn to result, and the difference. Target:
confined ≤ 25 ms over unconfined. Without bubblewrap the section fails (nothing to measure).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from bench.measure import format_ratio, format_seconds, median
from bench.results import SectionResult, Table
from forge.agent.sandbox.sandbox import CommandSandbox
from forge.agent.tools.base import ToolContext
from forge.agent.tools.execute_command import ExecuteCommandArgs, ExecuteCommandTool
from forge.config.settings import SandboxSettings

RUNS = 40
TARGET_SECONDS = 0.025
COMMAND = "python -m bench sandbox"


async def _call(tool: ExecuteCommandTool, context: ToolContext) -> float:
    started = time.perf_counter()
    result = await tool.run(ExecuteCommandArgs(command="true"), context)
    elapsed = time.perf_counter() - started
    if result.exit_code != 0:
        raise RuntimeError(f"`true` failed: {result.content}")
    return elapsed


async def _measure(workspace: Path) -> tuple[float, float]:
    confined = CommandSandbox(SandboxSettings(), workspace)
    unconfined = CommandSandbox(SandboxSettings(mode="off"), workspace)
    if not confined.enabled:
        raise RuntimeError(f"no sandbox to measure: {confined.mechanism.problem}")
    tool = ExecuteCommandTool()
    contexts = {
        "confined": ToolContext(workspace=workspace, sandbox=confined),
        "unconfined": ToolContext(workspace=workspace, sandbox=unconfined),
    }
    samples: dict[str, list[float]] = {name: [] for name in contexts}
    try:
        for context in contexts.values():  # the first confined call makes the namespace
            await _call(tool, context)
        for _ in range(RUNS):  # interleaved: both see the same load
            for name, context in contexts.items():
                samples[name].append(await _call(tool, context))
    finally:
        confined.close()
        unconfined.close()
    return median(samples["confined"]), median(samples["unconfined"])


def run() -> SectionResult:
    """One table: the median call, confined and not, and the difference against the target."""
    with tempfile.TemporaryDirectory(prefix="forge-bench-sandbox-") as folder:
        confined, unconfined = asyncio.run(_measure(Path(folder)))
    over = confined - unconfined
    table = Table(
        "execute_command `true` (wall time of the call, spawn to result)",
        ("command", "median", "ratio to unconfined"),
    )
    table.rows.append(
        ("unconfined (baseline)", format_seconds(unconfined), format_ratio(unconfined, unconfined))
    )
    table.rows.append(
        ("confined (bubblewrap)", format_seconds(confined), format_ratio(confined, unconfined))
    )
    target = f"target ≤ {TARGET_SECONDS * 1000:.0f} ms"
    table.rows.append(("difference", format_seconds(over), target))
    result = SectionResult("sandbox", "9. Sandbox start-up", COMMAND, [table])
    result.notes.append(
        f"Median of {RUNS} calls each, interleaved, in one session after a first call (the "
        "session's network namespace and pids cgroup exist by then). Both go through the real "
        "tool; the unconfined one is the same session's sandbox turned off."
    )
    if over > TARGET_SECONDS:
        result.notes.append(
            f"Over the target: {over * 1000:.1f} ms (the machine's load counts: compare the ratio)."
        )
    return result
