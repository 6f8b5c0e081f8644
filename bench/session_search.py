"""Section 10: searching saved sessions (`forge sessions --search`; docs/adr/0058).

1,000 session files of 200 messages each (user messages, answers, tool calls and their output,
about 300 characters each; 60 MB in all) are written by Forge's own `SessionLog`. Measured:
the first search (the index built from nothing), a search with the index up to date (every
file compared by size and time, nothing read again), the same after ten files changed, and
the same word searched by scanning the files (no index) as the baseline.

Target: an up-to-date search of the 1,000 sessions under 0.5 s; every searched word found in
the session it was planted in.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from bench.results import SectionResult, Table
from forge.agent.history.session_file import SessionStore
from forge.agent.history.session_search import SessionSearch
from forge.context.conversation import Conversation
from forge.llm.messages import ToolCall, assistant, system, tool_result, user

COMMAND = "python -m bench session_search"
SESSIONS = 1000
MESSAGES = 200
TARGET_SECONDS = 0.5
FILLER = (
    "The parser keeps the configuration in a table of sections, and each section holds the "
    "keys read from the file in order; a repeated key replaces the earlier value. "
)


def planted_word(number: int) -> str:
    """The word only session `number`'s third answer holds."""
    return f"zebrafinch{number:04d}"


def write_sessions(store: SessionStore, workspace: Path, count: int, messages: int) -> list[str]:
    """`count` sessions of `messages` messages each (system prompt aside), written by
    `SessionLog`; session `n`'s third answer holds `planted_word(n)` and a tool output holds
    `toolonly{n:04d}`. Their ids, in the order written."""
    ids = []
    for number in range(count):
        log = store.create(workspace, "gpt-4o")
        conversation = Conversation()
        log.attach(conversation)
        conversation.append(system("You are Forge."))
        answers = 0
        while len(conversation.messages) <= messages:
            step = len(conversation.messages)
            conversation.append(user(f"Question {step} about the parser. {FILLER}"))
            call = ToolCall(f"call_{step}", "read_file", '{"path": "parser.py"}')
            conversation.append(assistant(tool_calls=(call,)))
            conversation.append(
                tool_result(call, f"def parse():\n    pass  # toolonly{number:04d} {FILLER}")
            )
            answers += 1
            extra = f" {planted_word(number)}" if answers == 3 else ""
            conversation.append(assistant(f"The parser reads sections.{extra} {FILLER}"))
        ids.append(log.id)
    return ids


def _timed(search: SessionSearch, word: str, workspace: Path) -> tuple[float, int]:
    started = time.perf_counter()
    hits = search.search(word, workspace)
    return time.perf_counter() - started, len(hits)


def run() -> SectionResult:
    """Build the sessions, time the searches, check the target."""
    result = SectionResult("session_search", "10. Searching saved sessions", COMMAND)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        workspace = root / "project"
        workspace.mkdir()
        store = SessionStore(root / "sessions")
        ids = write_sessions(store, workspace, SESSIONS, MESSAGES)
        size = sum(path.stat().st_size for path in store.directory.glob("*.jsonl"))
        search = SessionSearch(store)
        rows: list[tuple[str, float, int]] = []
        rows.append(("first search (index built)", *_timed(search, planted_word(7), workspace)))
        up_to_date = _timed(search, planted_word(500), workspace)
        rows.append(("index up to date", *up_to_date))
        for session_id in ids[:10]:  # another process appends to ten sessions
            with store.path_for(session_id).open("a", encoding="utf-8") as handle:
                handle.write('{"type": "name", "name": "renamed elsewhere"}\n')
        rows.append(("10 files changed", *_timed(search, "renamed elsewhere", workspace)))
        started = time.perf_counter()
        scanned = search._search_files(planted_word(900), workspace, include_tools=False)
        rows.append(("scan, no index (baseline)", time.perf_counter() - started, len(scanned)))
    baseline = rows[-1][1]
    table = Table(
        f"{SESSIONS} sessions x {MESSAGES} messages ({size / 1e6:.0f} MB of session files)",
        ("search", "seconds", "sessions found", "ratio to scan"),
    )
    for label, seconds, found in rows:
        table.rows.append((label, f"{seconds:.3f}", str(found), f"{seconds / baseline:.2f}x"))
    result.tables.append(table)
    if up_to_date[0] >= TARGET_SECONDS:
        result.violations.append(
            f"an up-to-date search took {up_to_date[0]:.3f} s (target < {TARGET_SECONDS} s)"
        )
    expected = {"first search (index built)": 1, "index up to date": 1, "10 files changed": 10}
    for label, _, found in rows:
        if label in expected and found != expected[label]:
            result.violations.append(f"{label}: found {found} sessions, expected {expected[label]}")
    return result


if __name__ == "__main__":
    outcome = run()
    print(outcome.report())
    sys.exit(1 if outcome.failed else 0)
