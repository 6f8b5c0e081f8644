"""What a benchmark section returns, how it prints, and the RESULTS.md it is written to."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
RESULTS_FILE = Path(__file__).resolve().parent / "RESULTS.md"
VIOLATION_MARKER = "!! VIOLATION"
"""Printed before every broken invariant (e.g. more summary requests in flight than allowed)."""


@dataclass
class Table:
    """Rows of text cells under a header; the first column is a label."""

    title: str
    header: Sequence[str]
    rows: list[Sequence[str]] = field(default_factory=list)

    def text(self) -> str:
        """A plain-text table: the first column left-aligned, the others right-aligned."""
        widths = [len(title) for title in self.header]
        for row in self.rows:
            for index, cell in enumerate(row):
                widths[index] = max(widths[index], len(cell))

        def line(cells: Sequence[str]) -> str:
            aligned = [
                cell.ljust(widths[index]) if index == 0 else cell.rjust(widths[index])
                for index, cell in enumerate(cells)
            ]
            return "  ".join(aligned).rstrip()

        separator = "  ".join("-" * width for width in widths)
        body = [line(self.header), separator, *(line(row) for row in self.rows)]
        return "\n".join([self.title, *body] if self.title else body)

    def markdown(self) -> str:
        """The table in GitHub markdown (a bold title line first when it has one)."""

        def cells(values: Sequence[str]) -> str:
            return "| " + " | ".join(value.replace("|", "\\|") for value in values) + " |"

        align = "| " + " | ".join("---" if i == 0 else "---:" for i in range(len(self.header)))
        lines = [cells(self.header), align + " |", *(cells(row) for row in self.rows)]
        return "\n".join([f"**{self.title}**", "", *lines] if self.title else lines)


@dataclass
class SectionResult:
    """One section's outcome: its tables, method notes, broken invariants and any error."""

    name: str
    """The name given on the command line (`python -m bench NAME`)."""
    title: str
    command: str
    """How to reproduce this section alone."""
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    """Invariants the measurement found broken; any makes the run exit non-zero."""
    error: str | None = None
    """The traceback or message when the section could not run at all."""
    markdown: str = ""
    """Markdown a section renders itself (the replay), shown as is (its headings demoted)."""
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        """True when the section raised or found a broken invariant."""
        return self.error is not None or bool(self.violations)

    def report(self) -> str:
        """The section as printed on the terminal."""
        parts = [f"== {self.title} =="]
        parts += [table.text() for table in self.tables]
        if self.markdown:
            parts.append(self.markdown.rstrip())
        parts += [f"{VIOLATION_MARKER}: {violation}" for violation in self.violations]
        if self.error is not None:
            parts.append(f"!! FAILED: {self.error.rstrip()}")
        return "\n\n".join(parts) + "\n"


@dataclass(frozen=True)
class Machine:
    """Where and when the benchmarks ran."""

    cpu: str
    cores: int
    memory_gib: float
    python: str
    system: str
    date: str
    commit: str
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """The load average (1, 5, 15 minutes) when the facts were taken (the run's end)."""

    def lines(self) -> list[str]:
        """One markdown bullet per fact."""
        return [
            f"- CPU: {self.cpu}, {self.cores} cores",
            f"- Memory: {self.memory_gib:.1f} GiB",
            f"- System: {self.system}, Python {self.python}",
            f"- Date: {self.date}",
            f"- Commit: {self.commit}",
            f"- Load average at the end of the run (1/5/15 min): "
            f"{self.load[0]:.2f} / {self.load[1]:.2f} / {self.load[2]:.2f} on {self.cores} cores"
            " (other processes compete for the cores above 1 per core)",
        ]


def cpu_model(cpuinfo: str) -> str:
    """The first `model name` in /proc/cpuinfo text ("unknown" when absent)."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return value.strip()
    return "unknown"


def memory_gib(meminfo: str) -> float:
    """MemTotal from /proc/meminfo text, in GiB (0.0 when absent)."""
    for line in meminfo.splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / (1024 * 1024)
    return 0.0


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def current_commit() -> str:
    """The checked-out commit (short hash), "+ changes" when the tree differs from it."""

    def git(*arguments: str) -> str:
        completed = subprocess.run(
            ["git", *arguments], cwd=REPOSITORY, capture_output=True, text=True, check=False
        )
        return completed.stdout.strip() if completed.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "forge", "bench")
    return f"{commit} + uncommitted changes" if dirty else commit


def this_machine() -> Machine:
    """Facts about this machine, now."""
    return Machine(
        cpu=cpu_model(_read("/proc/cpuinfo"))
        if os.path.exists("/proc/cpuinfo")
        else platform.processor() or "unknown",
        cores=os.cpu_count() or 0,
        memory_gib=memory_gib(_read("/proc/meminfo")),
        python=platform.python_version(),
        system=f"{platform.system()} {platform.release()}",
        date=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        commit=current_commit(),
        load=os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0),
    )


def demote_headings(markdown: str) -> str:
    """Every markdown heading one level deeper (outside fenced code), so a section's own
    headings nest under its title."""
    lines = []
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        lines.append("#" + line if not fenced and line.startswith("#") else line)
    return "\n".join(lines)


def results_markdown(
    sections: Sequence[SectionResult], machine: Machine, total_seconds: float
) -> str:
    """The whole RESULTS.md: machine, then each section's tables, notes and how to rerun it."""
    failed = [section.name for section in sections if section.failed]
    lines = [
        "# Benchmark results",
        "",
        "Written by `make bench` (`python -m bench`); do not edit by hand. The method is in",
        "bench/README.md. Every figure is a median over repeated runs, compared with a baseline",
        "measured in the same run.",
        "",
        *machine.lines(),
        f"- Whole run: {total_seconds:.0f} s",
        f"- Outcome: {'FAILED (' + ', '.join(failed) + ')' if failed else 'every section passed'}",
    ]
    for section in sections:
        lines += [
            "",
            f"## {section.title}",
            "",
            f"Reproduce: `{section.command}` ({section.seconds:.0f} s in this run).",
        ]
        for note in section.notes:
            lines += ["", note]
        for table in section.tables:
            lines += ["", table.markdown()]
        if section.markdown:
            lines += ["", demote_headings(section.markdown.rstrip())]
        for violation in section.violations:
            lines += ["", f"**{VIOLATION_MARKER}**: {violation}"]
        if section.error is not None:
            lines += ["", "**FAILED**:", "", "```text", section.error.rstrip(), "```"]
    return "\n".join(lines) + "\n"


def write_results(
    sections: Sequence[SectionResult],
    machine: Machine,
    total_seconds: float,
    path: Path = RESULTS_FILE,
) -> Path:
    """Write `results_markdown(...)` to `path` and return it."""
    path.write_text(results_markdown(sections, machine, total_seconds), encoding="utf-8")
    return path
