"""Find every `bench/bench_*.py` module, run it, and print its rows as a table.

Usage: `python -m bench [NAME ...]`, where a NAME such as `tokenizer` limits the run to
`bench_tokenizer`. Exit status 1 if any benchmark raised (a skipped one is not an error).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from bench import BenchmarkSkipped

BENCHMARK_PREFIX = "bench_"


def discover(names: Sequence[str] = ()) -> list[ModuleType]:
    """The benchmark modules in this package, sorted; only those in `names` if any are given."""
    wanted = {name.removeprefix(BENCHMARK_PREFIX) for name in names}
    modules = []
    for module_info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)])):
        if not module_info.name.startswith(BENCHMARK_PREFIX):
            continue
        if wanted and module_info.name.removeprefix(BENCHMARK_PREFIX) not in wanted:
            continue
        modules.append(importlib.import_module(f"bench.{module_info.name}"))
    return modules


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned."""
    widths = [len(title) for title in header]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))

    def line(cells: Sequence[str]) -> str:
        aligned = [
            cell.ljust(widths[index]) if index == 0 else cell.rjust(widths[index])
            for index, cell in enumerate(cells)
        ]
        return "  ".join(aligned).rstrip()

    separator = "  ".join("-" * width for width in widths)
    return "\n".join([line(header), separator, *(line(row) for row in rows)])


def main(argv: Sequence[str]) -> int:
    """Run the selected benchmarks and print their tables; 1 if any of them failed."""
    modules = discover(argv)
    if not modules:
        print(f"no benchmarks match {' '.join(argv)!r}", file=sys.stderr)
        return 1
    failed = False
    for module in modules:
        title = module.__name__.removeprefix("bench.")
        print(f"== {title} ==")
        try:
            rows = module.run()
        except BenchmarkSkipped as reason:
            print(f"skipped: {reason}\n")
            continue
        except Exception:
            failed = True
            traceback.print_exc()
            print()
            continue
        print(format_table(module.HEADER, rows))
        print()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
