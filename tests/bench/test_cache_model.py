"""The prefix-cache model and the request token counts of the replay."""

from __future__ import annotations

import pytest

from bench.cache_model import (
    RequestTokenizer,
    cached_tokens,
    common_prefix,
    prompt_tokens,
)
from forge.agent.tools.registry import default_registry
from forge.llm.tokenizer import TiktokenCounter, get_encoding
from tests.bench.sessions_support import tool_session


@pytest.mark.parametrize(
    ("prefix", "cached"),
    [(0, 0), (1023, 0), (1024, 1024), (1151, 1024), (1152, 1152), (5000, 4992)],
)
def test_cached_part_is_zero_under_1024_then_rounded_down_to_128(prefix: int, cached: int) -> None:
    assert cached_tokens(prefix) == cached


def test_common_prefix_counts_whole_equal_segments_then_tokens_of_the_first_difference() -> None:
    previous = [(1, 2, 3), (4, 5), (6, 7, 8), (9,)]
    assert common_prefix(previous, [(1, 2, 3), (4, 5), (6, 7, 0), (9,)]) == 7
    assert common_prefix(previous, [(1, 2, 3), (0, 5), (6, 7, 8)]) == 3
    assert common_prefix(previous, [*previous, (10, 11)]) == 9
    assert common_prefix(previous, previous[:2]) == 5
    assert common_prefix(previous, [(2,)]) == 0


def test_request_counts_match_forges_own_counter() -> None:
    tokenizer = RequestTokenizer(get_encoding("o200k_base"))
    counter = TiktokenCounter("gpt-4o")
    specs = default_registry().specs()
    messages = tool_session(3)
    segments = tokenizer.request(tokenizer.tools(specs), messages)
    assert prompt_tokens(segments) == counter.count_tools(specs) + counter.count_messages(messages)


def test_appending_keeps_the_prefix_and_masking_an_early_message_breaks_it() -> None:
    tokenizer = RequestTokenizer(get_encoding("o200k_base"))
    tools = tokenizer.tools(default_registry().specs())
    messages = tool_session(6, output_words=200)
    first = tokenizer.request(tools, messages[:-3])
    grown = tokenizer.request(tools, messages)
    shared = common_prefix(first, grown)
    assert shared == prompt_tokens(first) - 3  # all but the reply priming
    assert cached_tokens(shared) == shared // 128 * 128
    changed = [*messages[:3], messages[3].evolve(content="[omitted]"), *messages[4:]]
    assert common_prefix(grown, tokenizer.request(tools, changed)) < shared // 2
