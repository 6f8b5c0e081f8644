"""The subagents section's pieces: its limit and its peak count (the section itself runs in
`make bench`)."""

from __future__ import annotations

from bench.subagents import limit_seconds, peak_in_flight
from tests.support.openai_server import RecordedRequest


def request(start: float, end: float) -> RecordedRequest:
    return RecordedRequest("/v1/chat/completions", {}, {}, started_at=start, finished_at=end)


def test_the_limit_is_one_latency_per_wave() -> None:
    assert limit_seconds(1, 4, 0.5) == 0.5
    assert limit_seconds(4, 4, 0.5) == 0.5
    assert limit_seconds(5, 4, 0.5) == 1.0
    assert limit_seconds(12, 4, 0.5) == 1.5


def test_the_peak_counts_overlapping_requests_only() -> None:
    assert peak_in_flight([request(0, 1), request(0.5, 1.5), request(2, 3)]) == 2
    assert peak_in_flight([request(0, 1), request(1.5, 2)]) == 1
    assert peak_in_flight([]) == 0
