"""Small statistics and timing helpers shared by the benchmark sections."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence


def median(values: Sequence[float]) -> float:
    """The median of `values`; ValueError when there are none."""
    if not values:
        raise ValueError("median of no values")
    return float(statistics.median(values))


def percentile(values: Sequence[float], share: float) -> float:
    """The `share` (0..1) percentile of `values` by linear interpolation between closest ranks
    (p50 is the median); ValueError when there are none."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be in [0, 1], not {share}")
    ordered = sorted(values)
    position = share * (len(ordered) - 1)
    low = math.floor(position)
    high = math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def ratio(value: float, baseline: float) -> float:
    """`value / baseline`; infinity when the baseline is 0 and the value is not."""
    if baseline == 0:
        return 0.0 if value == 0 else math.inf
    return value / baseline


def format_ratio(value: float, baseline: float, digits: int = 2) -> str:
    """`value / baseline` as text with a trailing "x" (e.g. "1.07x"); "-" without a baseline."""
    if baseline != baseline or value != value:  # NaN: not measured
        return "-"
    result = ratio(value, baseline)
    return "inf" if math.isinf(result) else f"{result:.{digits}f}x"


def format_seconds(seconds: float) -> str:
    """A duration with a unit that keeps three significant figures: µs, ms or s."""
    if seconds != seconds:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def timed(action: Callable[[], object]) -> float:
    """Seconds `action()` took (perf_counter)."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def median_time(action: Callable[[], object], runs: int) -> float:
    """The median of `runs` timed calls of `action` (at least one)."""
    return median([timed(action) for _ in range(max(1, runs))])
