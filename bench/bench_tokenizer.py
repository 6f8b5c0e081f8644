"""Token counting over a real agent trajectory: the per-message cache against re-encoding.

Two scenarios over the OpenHands ponyc-4593 session (69 messages, 33 tool calls):
- one full count: naive re-encode (baseline), a counter with an empty cache, a warm counter;
- the agent loop: the conversation is recounted after every new message, as the context
  manager does before each LLM call; naive re-encoding (baseline) against one cached counter.
The ratio column is each case's time divided by its scenario's baseline, from this run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from bench import BenchmarkSkipped
from bench.corpus import TRAJECTORY, load_trajectory
from forge.llm.messages import Message
from forge.llm.model_info import encoding_name_for
from forge.llm.tokenizer import (
    REPLY_PRIMING_TOKENS,
    TiktokenCounter,
    count_message_tokens,
    get_encoding,
)

MODEL = "gpt-4o"
REPETITIONS = 5

HEADER = ("case", "messages", "tokens", "seconds", "time / baseline")


def best_time(action: Callable[[], int], repetitions: int = REPETITIONS) -> tuple[float, int]:
    """The fastest of `repetitions` runs of `action`, and what it returned."""
    best = float("inf")
    result = 0
    for _ in range(repetitions):
        started = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - started)
    return best, result


def run() -> list[tuple[str, ...]]:
    """Measure the scenarios; raises BenchmarkSkipped if the corpus is not beside the repo."""
    if not TRAJECTORY.is_file():
        raise BenchmarkSkipped(f"trajectory not found at {TRAJECTORY}")
    messages = load_trajectory(TRAJECTORY)
    count = str(len(messages))

    # Forget this process's encodings so the load below is timed as a fresh start would see it.
    get_encoding.cache_clear()
    started = time.perf_counter()
    encoding = get_encoding(encoding_name_for(MODEL))
    load_seconds = time.perf_counter() - started

    def naive_count(prefix: Sequence[Message]) -> int:
        return sum(count_message_tokens(encoding, m) for m in prefix) + REPLY_PRIMING_TOKENS

    def cold_count() -> int:
        return TiktokenCounter(MODEL).count_messages(messages)

    warm_counter = TiktokenCounter(MODEL)
    warm_counter.count_messages(messages)

    def naive_loop() -> int:
        return sum(naive_count(messages[: end + 1]) for end in range(len(messages)))

    def cached_loop() -> int:
        counter = TiktokenCounter(MODEL)
        return sum(counter.count_messages(messages[: end + 1]) for end in range(len(messages)))

    naive_seconds, naive_tokens = best_time(lambda: naive_count(messages))
    cold_seconds, cold_tokens = best_time(cold_count)
    warm_seconds, warm_tokens = best_time(lambda: warm_counter.count_messages(messages))
    naive_loop_seconds, naive_loop_tokens = best_time(naive_loop)
    cached_loop_seconds, cached_loop_tokens = best_time(cached_loop)

    def row(case: str, tokens: int, seconds: float, baseline: float) -> tuple[str, ...]:
        return (case, count, f"{tokens:,}", f"{seconds:.6f}", f"{seconds / baseline:.3f}")

    return [
        (f"load {encoding.name} (first use in a process)", "-", "-", f"{load_seconds:.6f}", "-"),
        row("full count: naive re-encode (baseline)", naive_tokens, naive_seconds, naive_seconds),
        row("full count: cold cache", cold_tokens, cold_seconds, naive_seconds),
        row("full count: warm cache", warm_tokens, warm_seconds, naive_seconds),
        row(
            "agent loop: naive re-encode per turn (baseline)",
            naive_loop_tokens,
            naive_loop_seconds,
            naive_loop_seconds,
        ),
        row(
            "agent loop: cached counter",
            cached_loop_tokens,
            cached_loop_seconds,
            naive_loop_seconds,
        ),
    ]
