"""Chunking and counting stay linear in the text and leave the event loop (issue 20,
docs/adr/0036). Linearity is asserted on the work done (characters handed to the counter),
never on seconds."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from forge.context.chunking import split_text, split_text_async
from forge.llm.messages import user
from forge.llm.text_segments import count_text_async, segments
from forge.llm.tokenizer import CharEstimateCounter, TiktokenCounter, encoded_length


class CharactersCounted:
    """A 4-characters-per-token counter that adds up every character it was asked to count."""

    def __init__(self) -> None:
        self.characters = 0
        self.calls = 0
        self.estimate = CharEstimateCounter(4).count_text

    def __call__(self, text: str) -> int:
        self.characters += len(text)
        self.calls += 1
        return self.estimate(text)


class SlowCounter(CharactersCounted):
    """Takes 10 ms per call, so counting 300 segments would take 3 s."""

    def __call__(self, text: str) -> int:
        time.sleep(0.01)
        return super().__call__(text)


@pytest.mark.parametrize(
    "text",
    [
        "x" * 2_000_000,  # one sentence with no boundary at all: character cuts only
        ("word " * 400_000),  # one paragraph, no sentence ends
        ("A sentence here. " * 60_000 + "\n\n") * 2,  # paragraphs of many sentences
    ],
    ids=["no-boundary", "no-sentence-end", "sentences"],
)
def test_chunking_counts_each_character_a_bounded_number_of_times(text: str) -> None:
    counter = CharactersCounted()
    chunks = split_text(text, chunk_size=500, overlap=50, count_tokens=counter)
    assert "".join(chunk.own_text for chunk in chunks) == text
    # Before: every cut recounted the rest of the text (about n²/chunk characters, here
    # hundreds of times the text); now each character is counted a few times at most.
    assert counter.characters <= 8 * len(text)


def test_doubling_the_text_doubles_the_work() -> None:
    work = []
    for size in (500_000, 1_000_000):
        counter = CharactersCounted()
        split_text("y" * size, chunk_size=300, overlap=30, count_tokens=counter)
        work.append(counter.characters)
    assert work[1] <= 2.2 * work[0]


def test_segments_join_back_and_cut_at_natural_breaks() -> None:
    text = "".join(f"line {n} of the text\n" + ("\n" if n % 7 == 0 else "") for n in range(5000))
    parts = list(segments(text, 1000))
    assert "".join(parts) == text
    assert all(500 <= len(part) <= 1000 for part in parts[:-1])
    assert all(part.endswith("\n") for part in parts[:-1])
    assert list(segments("z" * 2500, 1000)) == ["z" * 1000, "z" * 1000, "z" * 500]


@pytest.mark.parametrize("overlap", [0, 12])
async def test_the_async_split_covers_the_text_and_carries_the_overlap_across_segments(
    overlap: int,
) -> None:
    count = CharEstimateCounter(4).count_text
    text = " ".join(f"Fact {n} is here." for n in range(3000)) + "z" * 5000
    chunks = await split_text_async(text, 80, overlap, count, segment_characters=4096)
    assert "".join(chunk.own_text for chunk in chunks) == text
    assert all(count(chunk.text) <= 80 for chunk in chunks)
    for before, after in itertools.pairwise(chunks):
        assert bool(after.overlap_text) == bool(overlap)
        assert before.text.endswith(after.overlap_text)


async def test_a_huge_count_lets_other_tasks_run_and_can_be_cancelled() -> None:
    count = CharactersCounted()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticking = asyncio.create_task(ticker())
    total = await count_text_async(count, "q" * 3_000_000, size=100_000)
    assert total == 750_000 and count.calls == 30
    assert ticks >= 30  # the loop ran between the segments
    slow = SlowCounter()
    counting = asyncio.create_task(count_text_async(slow, "q" * 30_000_000, size=100_000))
    while slow.calls < 3:  # noqa: ASYNC110 - the counter runs in a worker thread
        await asyncio.sleep(0.001)
    counting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await counting
    assert slow.calls < 10  # 300 segments; it stopped after the one under way
    ticking.cancel()


def test_tiktoken_counts_a_long_run_in_segments() -> None:
    counter = TiktokenCounter("gpt-4o")
    small = "x" * 64_000
    assert encoded_length(counter.encoding, small) == len(counter.encoding.encode_ordinary(small))
    # 1 MB without a space: one tiktoken piece, superlinear at once; linear in segments.
    assert 100_000 < counter.count_text("x" * 1_000_000) < 200_000


async def test_count_ahead_fills_the_cache_for_huge_messages_only() -> None:
    counter = TiktokenCounter("gpt-4o")
    huge, small = user("word " * 200_000), user("hello")
    await counter.count_ahead([huge, small])
    assert counter.is_cached(huge) and not counter.is_cached(small)
    hits = counter.cache_hits
    assert counter.count_message(huge) > 200_000 and counter.cache_hits == hits + 1
