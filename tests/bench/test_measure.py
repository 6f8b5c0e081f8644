"""The statistics helpers every benchmark figure goes through."""

from __future__ import annotations

import math

import pytest

from bench.measure import format_ratio, format_seconds, median, median_time, percentile, ratio


def test_median_of_odd_and_even_counts() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5


def test_median_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        median([])


def test_percentile_interpolates_between_ranks() -> None:
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert percentile(values, 0.5) == median(values)
    assert percentile(values, 0.0) == 1.0
    assert percentile(values, 1.0) == 20.0
    assert percentile(values, 0.95) == pytest.approx(19.05)
    assert percentile([5.0], 0.95) == 5.0


def test_percentile_rejects_shares_outside_zero_to_one() -> None:
    with pytest.raises(ValueError):
        percentile([1.0], 95)


def test_ratio_and_its_text() -> None:
    assert ratio(3.0, 2.0) == 1.5
    assert math.isinf(ratio(1.0, 0.0))
    assert ratio(0.0, 0.0) == 0.0
    assert format_ratio(3.0, 2.0) == "1.50x"
    assert format_ratio(1.0, 3.0, 3) == "0.333x"
    assert format_ratio(1.0, 0.0) == "inf"
    assert format_ratio(math.nan, 1.0) == "-"


def test_seconds_get_a_readable_unit() -> None:
    assert format_seconds(0.0000123) == "12.3 µs"
    assert format_seconds(0.0123) == "12.3 ms"
    assert format_seconds(12.345) == "12.35 s"
    assert format_seconds(math.nan) == "-"


def test_median_time_runs_the_action_each_time() -> None:
    calls: list[int] = []
    seconds = median_time(lambda: calls.append(1), runs=5)
    assert len(calls) == 5
    assert seconds >= 0.0
