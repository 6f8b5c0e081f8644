"""The work ledger as text, within its share of the budget (docs/adr/0050).

`render_ledger` writes every file and command in full when they fit in `limit` tokens; when
they do not, it aggregates the oldest first — files read become one line per directory
("src/: 14 files read"), then older changed files too ("src/: 9 files edited (+120 -40)"),
older commands a count ("31 earlier commands: 27 exit 0, 4 failed") — always keeping the files
changed most recently, the last command with its exit code, the last test run with its result
and the last error, the facts a successor needs first.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from forge.context.work_ledger import CommandRun, FileRecord, WorkLedger

T = TypeVar("T")

LEDGER_HEADER = "[Work ledger: what this session did, from its tool calls]"


@dataclass(frozen=True)
class Detail:
    """How much one rendering keeps in full (the rest aggregated)."""

    files_read: int
    files_changed: int
    commands: int
    errors: int


_DETAILS = (
    Detail(10_000, 10_000, 10_000, 10_000),
    Detail(40, 10_000, 40, 10),
    Detail(0, 40, 20, 5),
    Detail(0, 20, 10, 3),
    Detail(0, 10, 5, 2),
    Detail(0, 5, 3, 1),
    Detail(0, 2, 1, 1),
)


def render_ledger(ledger: WorkLedger, limit: int, count: Callable[[str], int]) -> str:
    """The ledger's text, aggregated until `count` says it fits in `limit` tokens (the most
    aggregated form when nothing fits); "" when the ledger is empty."""
    if ledger.is_empty():
        return ""
    text = ""
    for detail in _DETAILS:
        text = _render(ledger, detail)
        if count(text) <= limit:
            return text
    return text


def _render(ledger: WorkLedger, detail: Detail) -> str:
    files = sorted(ledger.files.values(), key=lambda record: record.order)
    changed = [f for f in files if f.changed]
    read = [f for f in files if f.read and not f.changed]
    lines = [LEDGER_HEADER]
    if changed:
        lines.append("Files changed:")
        older, newer = _split(changed, detail.files_changed)
        lines.extend(f"- {line}" for line in _aggregate(older, "changed"))
        lines.extend(f"- {_file_line(record)}" for record in newer)
    if read:
        older, newer = _split(read, detail.files_read)
        listed = _aggregate(older, "read") + [record.path for record in newer]
        lines.append("Files read: " + "; ".join(listed))
    if ledger.commands:
        lines.append("Commands (exit code; recall key of the output):")
        older_runs, newer_runs = _split(ledger.commands, detail.commands)
        if older_runs:
            lines.append(f"- {_commands_aggregate(older_runs)}")
        lines.extend(f"- {_command_line(run)}" for run in newer_runs)
        tests = [run for run in ledger.commands if run.test]
        if tests and tests[-1] not in newer_runs:
            lines.append(f"Last test run: {_command_line(tests[-1])}")
    if ledger.errors:
        older_errors, newer_errors = _split(ledger.errors, detail.errors)
        lines.append(
            "Errors met"
            + (f" ({len(older_errors)} earlier not listed)" if older_errors else "")
            + ":"
        )
        lines.extend(f"- {error}" for error in newer_errors)
    if ledger.abandoned:
        lines.append("Abandoned: " + "; ".join(ledger.abandoned[-max(3, detail.errors) :]))
    return "\n".join(lines)


def _split(items: Sequence[T], newest: int) -> tuple[list[T], list[T]]:
    cut = max(0, len(items) - newest)
    return list(items[:cut]), list(items[cut:])


def _file_line(record: FileRecord) -> str:
    what: list[str] = []
    if record.created:
        what.append("created")
    if record.edits:
        what.append("edited" if record.edits == 1 else f"edited {record.edits}x")
    if record.added or record.removed:
        what.append(f"+{record.added} -{record.removed}")
    if record.deleted:
        what.append("deleted")
    if record.reverted:
        what.append("reverted")
    return f"{record.path} ({', '.join(what)})" if what else record.path


def _aggregate(records: Sequence[FileRecord], verb: str) -> list[str]:
    """One line per directory: "src/: 14 files edited (+120 -40)"."""
    by_directory: dict[str, list[FileRecord]] = {}
    for record in records:
        directory = posixpath.dirname(record.path.rstrip("/")) or "."
        by_directory.setdefault(directory, []).append(record)
    lines: list[str] = []
    for directory, group in by_directory.items():
        noun = "file" if len(group) == 1 else "files"
        line = f"{directory}/: {len(group)} {noun} {verb}"
        if verb == "changed":
            kinds = [
                f"{sum(1 for r in group if test(r))} {name}"
                for name, test in (
                    ("created", lambda r: r.created),
                    ("edited", lambda r: r.edits > 0),
                    ("deleted", lambda r: r.deleted),
                    ("reverted", lambda r: r.reverted),
                )
                if any(test(r) for r in group)
            ]
            added = sum(r.added for r in group)
            removed = sum(r.removed for r in group)
            line += f" ({', '.join(kinds)}; +{added} -{removed})"
        lines.append(line)
    return lines


def _command_line(run: CommandRun) -> str:
    status = "exit ?" if run.exit_code is None else f"exit {run.exit_code}"
    if run.test:
        verdict = "passed" if run.exit_code == 0 else "failed"
        status = f"{status}, tests {verdict}" + (f": {run.result}" if run.result else "")
    key = f"; recall {run.key}" if run.key else ""
    return f"`{_clip(run.command)}` ({status}{key})"


def _commands_aggregate(runs: Sequence[CommandRun]) -> str:
    ok = sum(1 for run in runs if run.exit_code == 0)
    failed = sum(1 for run in runs if run.exit_code not in (None, 0))
    tests = sum(1 for run in runs if run.test)
    parts = [f"{ok} exit 0", f"{failed} failed"]
    if tests:
        parts.append(f"{tests} test runs")
    return f"{len(runs)} earlier commands: {', '.join(parts)}"


def _clip(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
