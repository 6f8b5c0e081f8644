"""The Anthropic-style cache price model on hand-made requests (segments of known sizes)."""

from __future__ import annotations

from bench.anthropic_cache import (
    LOOKBACK,
    MINIMUM,
    AnthropicCache,
    breakpoints,
    provider_breakpoints,
)
from bench.prices import anthropic_cost


def block(tag: int, size: int) -> tuple[int, ...]:
    return tuple([tag] * size)


TOOLS = block(1, 600)
SYSTEM = block(2, 600)
PRIMING = (-12, -13, -14)


def request(*messages: tuple[int, ...]) -> list[tuple[int, ...]]:
    return [TOOLS, SYSTEM, *messages, PRIMING]


def test_breakpoints_are_the_tools_the_system_prompt_and_the_newest_two_messages() -> None:
    segments = request(block(3, 10), block(4, 10), block(5, 10))
    assert breakpoints(segments, has_system=True) == [0, 1, 3, 4]
    assert breakpoints(segments, has_system=False) == [0, 3, 4]


def test_first_request_writes_the_prefix_then_the_next_reads_it() -> None:
    cache = AnthropicCache()
    first = request(block(3, 100), block(4, 100))
    charge = cache.charge(first, True)
    # Written up to the last breakpoint (1,400 tokens); the priming is plain input.
    assert (charge.read, charge.written, charge.uncached) == (0, 1400, 3)
    second = request(block(3, 100), block(4, 100), block(5, 50), block(6, 50))
    charge = cache.charge(second, True)
    assert (charge.read, charge.written, charge.uncached) == (1400, 100, 3)


def test_nothing_is_cached_below_the_minimum() -> None:
    cache = AnthropicCache()
    small = [block(1, 100), block(2, 100), block(3, 100), PRIMING]
    assert cache.charge(small, True).written == 0
    assert cache.charge(small, True).read == 0
    assert MINIMUM == 1024


def test_an_entry_further_back_than_the_lookback_is_not_found() -> None:
    cache = AnthropicCache()
    start = [block(3, 500)]
    cache.charge(request(*start), True)  # caches tools+system+message (1,700 tokens)
    grown = request(*start, *(block(10 + n, 5) for n in range(LOOKBACK + 2)))
    charge = cache.charge(grown, True)
    # Tools (600) are within reach from the system prompt's breakpoint; the 1,700-token entry
    # is 22 blocks before the last breakpoints and the system breakpoint is before it.
    assert charge.read == 1200
    within = request(*start, *(block(40 + n, 5) for n in range(LOOKBACK - 2)))
    assert AnthropicCache().charge(request(*start), True).written == 1700
    cache2 = AnthropicCache()
    cache2.charge(request(*start), True)
    assert cache2.charge(within, True).read == 1700


def test_peek_does_not_change_the_cache() -> None:
    cache = AnthropicCache()
    first = request(block(3, 100), block(4, 100))
    cache.peek(first, True)
    assert cache.charge(first, True).read == 0


def test_anthropic_cost_prices_reads_writes_and_input() -> None:
    dollars = anthropic_cost(
        read=1_000_000,
        written=1_000_000,
        uncached=1_000_000,
        agent_output=1_000_000,
        summary_input=1_000_000,
        summary_output=1_000_000,
    )
    # 0.3 read + 3.75 write + 3 input + 15 output + Haiku 1 in + 5 out
    assert round(dollars, 6) == round(0.3 + 3.75 + 3 + 15 + 1 + 5, 6)


def test_the_provider_breakpoints_fall_where_forge_s_anthropic_provider_puts_them() -> None:
    # tools, system, user, assistant(tool_use), tool, tool, assistant(tool_use), tool, priming:
    # merged: user, assistant, user(tool, tool), assistant, user(tool) -> newest and third-newest
    roles = ["system", "user", "assistant", "tool", "tool", "assistant", "tool"]
    segments = [("tools",), *[(role,) for role in roles], ("priming",)]
    marks = provider_breakpoints(segments, True, roles)
    # tools (0), system (1), the last tool of the merged user turn (segment 5), the newest (7)
    assert marks == [0, 1, 5, 7]
    assert provider_breakpoints(segments, False, ["user"]) == [0, 1]
