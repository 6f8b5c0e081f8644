"""Section 5: start-up. `forge --version` and `forge --help` against `python -c pass`, and the
import time of the TUI module against `import textual.app`, each in a fresh process.

Every command runs `RUNS` times, interleaved (so load on the machine hits each alike), and the
median wall time is reported with its ratio to the baseline. Import times are measured inside
the fresh interpreter (perf_counter around the import), so interpreter start-up is left out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from bench.measure import format_ratio, format_seconds, median
from bench.results import REPOSITORY, SectionResult, Table

RUNS = 7
HEAVIEST = 8
COMMAND = "python -m bench startup"
IMPORT_PROBE = (
    "import time; started = time.perf_counter(); import {module}; "
    "print(time.perf_counter() - started)"
)


def forge_command() -> list[str]:
    """The `forge` console script beside this interpreter, else `python -m forge`."""
    script = Path(sys.executable).with_name("forge")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "forge"]


def _environment() -> dict[str, str]:
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPOSITORY), environment.get("PYTHONPATH")])
    )
    return environment


def wall_time(command: Sequence[str]) -> float:
    """Seconds from spawning `command` to its exit; RuntimeError if it fails."""
    started = time.perf_counter()
    completed = subprocess.run(
        command, capture_output=True, cwd=REPOSITORY, env=_environment(), check=False
    )
    seconds = time.perf_counter() - started
    if completed.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} exited {completed.returncode}: {completed.stderr!r}"
        )
    return seconds


def import_time(module: str) -> float:
    """Seconds `import module` takes in a fresh interpreter."""
    completed = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE.format(module=module)],
        capture_output=True,
        text=True,
        cwd=REPOSITORY,
        env=_environment(),
        check=True,
    )
    return float(completed.stdout.strip().splitlines()[-1])


def import_tree(importtime_output: str) -> list[tuple[str, int, float]]:
    """(module, depth, cumulative seconds) per line of `python -X importtime` output, in order;
    depth 0 is the module imported at top level."""
    entries = []
    for line in importtime_output.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|", 2)
        if not cumulative.strip().isdigit():
            continue  # the header line
        stripped = name.strip()
        depth = (len(name.rstrip()) - len(stripped) - 1) // 2
        entries.append((stripped, depth, int(cumulative) / 1e6))
    return entries


def heaviest_direct_imports(module: str, count: int) -> tuple[float, list[tuple[str, float]]]:
    """From one `python -X importtime` run in a fresh interpreter: the seconds `import module`
    took, and the `count` imports it triggers directly (depth 1) that took longest, with their
    cumulative seconds."""
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        cwd=REPOSITORY,
        env=_environment(),
        check=True,
    )
    tree = import_tree(completed.stderr)
    total = next(seconds for name, depth, seconds in tree if depth == 0 and name == module)
    direct = [(name, seconds) for name, depth, seconds in tree if depth == 1]
    return total, sorted(direct, key=lambda entry: entry[1], reverse=True)[:count]


def interleaved(measures: dict[str, Callable[[], float]], runs: int) -> dict[str, float]:
    """The median of `runs` calls of each measure (returning seconds), taking turns so each
    sees the same load."""
    samples: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(runs):
        for name, measure in measures.items():
            samples[name].append(measure())
    return {name: median(values) for name, values in samples.items()}


def run() -> SectionResult:
    """Time the commands and imports; one table each."""
    forge = forge_command()
    commands = {
        "python -c pass (baseline)": [sys.executable, "-c", "pass"],
        "forge --version": [*forge, "--version"],
        "forge --help": [*forge, "--help"],
    }
    wall_time(commands["forge --version"])  # warm the file cache once
    times = interleaved(
        {name: partial(wall_time, command) for name, command in commands.items()},
        RUNS,
    )
    baseline = times["python -c pass (baseline)"]
    commands_table = Table(
        "Commands (wall time, spawn to exit)", ("command", "median", "ratio to python -c pass")
    )
    for name, seconds in times.items():
        commands_table.rows.append((name, format_seconds(seconds), format_ratio(seconds, baseline)))

    imports = {
        "import textual.app (baseline)": "textual.app",
        "import forge.tui.app": "forge.tui.app",
    }
    import_times = interleaved(
        {name: partial(import_time, module) for name, module in imports.items()},
        RUNS,
    )
    floor = import_times["import textual.app (baseline)"]
    imports_table = Table(
        "Imports (in a fresh interpreter)", ("import", "median", "ratio to textual.app")
    )
    for name, seconds in import_times.items():
        imports_table.rows.append((name, format_seconds(seconds), format_ratio(seconds, floor)))
    heaviest = Table(
        "What import forge.tui.app spends its time on (its direct imports, one -X importtime run)",
        ("module", "cumulative", "share of import forge.tui.app"),
    )
    total, direct = heaviest_direct_imports("forge.tui.app", HEAVIEST)
    for name, seconds in direct:
        heaviest.rows.append((name, format_seconds(seconds), f"{seconds / total:.0%}"))
    result = SectionResult(
        "startup", "5. Start-up", COMMAND, [commands_table, imports_table, heaviest]
    )
    result.notes.append(
        f"Median of {RUNS} runs each, interleaved. `forge` is the console script of the "
        "environment running the benchmark. Import times are measured inside a fresh "
        "interpreter around the import statement alone."
    )
    return result
