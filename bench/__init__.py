"""Benchmarks, run with `python -m bench` (or `make bench`).

Each `bench/bench_*.py` module exposes `HEADER` (column names) and `run()` returning rows of
strings; `bench/__main__.py` finds them and prints one table per module. Benchmarks report
times and ratios measured in the same run; they never pass or fail on a threshold.
"""

from __future__ import annotations


class BenchmarkSkipped(Exception):
    """Raised by a benchmark's `run()` when what it measures is unavailable (e.g. no corpus)."""
