"""`python -m bench [SECTION ...] [--results FILE]`: run benchmark sections, print their
tables, and (for a full run, or with --results) write the results file.

Sections, in order: replay, parallel, bookkeeping, tui, startup, interrupt, fleet,
subagents, tool_search, sandbox, session_search. With no
SECTION every one runs and `bench/RESULTS.md` is written. Exit status 1 when any section raised
(a missing corpus, no tmux, a missing module) or found a broken invariant; 2 for an unknown
section.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.results import RESULTS_FILE, SectionResult, this_machine, write_results


def run_replay(quick: bool = False) -> SectionResult:
    """Section 1, from `bench.replay` (it renders its own markdown); `quick`: its `--quick`
    budgets."""
    arguments = ["--quick"] if quick else []
    result = SectionResult(
        "replay",
        "1. Replay: what each context policy costs and keeps",
        " ".join(["python -m bench.replay", *arguments]),
    )
    try:
        replay = importlib.import_module("bench.replay")
    except ModuleNotFoundError as error:
        if error.name != "bench.replay":
            raise
        raise RuntimeError("bench/replay.py is missing: the replay section cannot run") from None
    result.markdown = replay.run(arguments)
    return result


def _section(module: str) -> Callable[[], SectionResult]:
    def run() -> SectionResult:
        result: SectionResult = importlib.import_module(module).run()
        return result

    return run


SECTIONS: dict[str, Callable[[], SectionResult]] = {
    "replay": run_replay,
    "parallel": _section("bench.parallel"),
    "bookkeeping": _section("bench.bookkeeping"),
    "tui": _section("bench.tui"),
    "startup": _section("bench.startup"),
    "interrupt": _section("bench.interrupt"),
    "fleet": _section("bench.fleet"),
    "subagents": _section("bench.subagents"),
    "tool_search": _section("bench.tool_search"),
    "sandbox": _section("bench.sandbox"),
    "session_search": _section("bench.session_search"),
}
TITLES = {
    "replay": "1. Replay",
    "parallel": "2. Parallel summarization",
    "bookkeeping": "3. Bookkeeping per LLM call",
    "tui": "4. The TUI",
    "startup": "5. Start-up",
    "interrupt": "6. Interrupting a huge summary",
    "fleet": "7. Fleet",
    "subagents": "8. Subagents",
    "tool_search": "9. Deferred MCP tools (tool_search)",
    "sandbox": "10. Sandbox start-up",
    "session_search": "11. Searching saved sessions",
}


def run_section(name: str, quick: bool = False) -> SectionResult:
    """Run one section (`quick`: the replay's `--quick`); an exception becomes the section's
    error (never a skip)."""
    started = time.perf_counter()
    try:
        result = run_replay(quick) if name == "replay" else SECTIONS[name]()
    except Exception:
        result = SectionResult(name, TITLES[name], f"python -m bench {name}")
        result.error = traceback.format_exc()
    result.seconds = time.perf_counter() - started
    return result


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    """The command line: section names and an optional results file."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", metavar="SECTION", help=", ".join(SECTIONS))
    parser.add_argument(
        "--quick",
        action="store_true",
        help="the replay at budgets 8k, 32k and default only (python -m bench.replay --quick)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        help=f"write the results here (default for a full run: {RESULTS_FILE})",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    """Run the selected sections (all by default); 1 if any failed, 2 for an unknown name."""
    arguments = parse_arguments(argv)
    unknown = [name for name in arguments.sections if name not in SECTIONS]
    if unknown:
        print(f"unknown section(s): {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
        return 2
    names = [name for name in SECTIONS if not arguments.sections or name in arguments.sections]
    started = time.perf_counter()
    results = []
    for name in names:
        print(f"-- running {name} --", flush=True)
        result = run_section(name, arguments.quick)
        results.append(result)
        print(result.report(), flush=True)
    total = time.perf_counter() - started
    destination = arguments.results or (None if arguments.sections else RESULTS_FILE)
    if destination is not None:
        path = write_results(results, this_machine(), total, destination)
        print(f"wrote {path}")
    failed = [result.name for result in results if result.failed]
    print(
        f"{len(results)} section(s) in {total:.0f} s"
        + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
