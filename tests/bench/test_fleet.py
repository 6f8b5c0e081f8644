"""The fleet section's pieces (bench/fleet.py) with a small fleet: real `forge run`
processes against the real server process. No test asserts a time."""

from __future__ import annotations

from bench.fleet import cores, limit_seconds, measure


def test_limit_is_one_and_a_half_runs_per_wave_of_cores() -> None:
    assert limit_seconds(2.0, 30, 2) == 1.5 * 2.0 * 15
    assert limit_seconds(2.0, 30, 4) == 1.5 * 2.0 * 8
    assert limit_seconds(2.0, 30, 64) == 3.0
    assert cores() >= 1


def test_a_small_fleet_succeeds_in_both_homes() -> None:
    result = measure(fleet=3, runs=1)

    (table,) = result.tables
    assert [row[0] for row in table.rows] == [
        "one run alone (median of 1)",
        "shared home",
        "--ephemeral",
    ]
    assert [row[1] for row in table.rows] == ["1/1", "3/3", "3/3"]
    # Only the wall-time comparison may fail on a loaded machine; nothing else.
    assert all("limit" in violation for violation in result.violations), result.violations
