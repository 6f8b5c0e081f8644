"""Chunking on paragraph, sentence and character boundaries, with overlap."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge.context.chunking import split_text
from forge.llm.tokenizer import CharEstimateCounter

count = CharEstimateCounter(4).count_text


def test_paragraphs_stay_whole_when_they_fit() -> None:
    paragraphs = [f"Paragraph {n} " + "text " * 30 + "end." for n in range(6)]
    text = "\n\n".join(paragraphs)
    chunks = split_text(text, chunk_size=100, overlap=0, count_tokens=count)
    assert len(chunks) > 1
    for chunk in chunks:
        body = chunk.text.strip()
        assert body.startswith("Paragraph")
        assert body.endswith("end.")


def test_long_paragraph_splits_on_sentences() -> None:
    sentences = [f"Sentence number {n} says something useful." for n in range(40)]
    text = " ".join(sentences)
    chunks = split_text(text, chunk_size=60, overlap=0, count_tokens=count)
    assert len(chunks) > 1
    for chunk in chunks:
        assert chunk.text.rstrip().endswith(".")
        assert chunk.text.startswith("Sentence")


def test_a_sentence_too_long_is_cut_on_characters() -> None:
    text = "x" * 1000
    chunks = split_text(text, chunk_size=50, overlap=0, count_tokens=count)
    assert [len(chunk.text) for chunk in chunks] == [200, 200, 200, 200, 200]


def test_overlap_repeats_the_tail_of_the_previous_chunk() -> None:
    sentences = [f"Fact {n} is here." for n in range(60)]
    text = " ".join(sentences)
    chunks = split_text(text, chunk_size=40, overlap=10, count_tokens=count)
    assert len(chunks) > 2
    for before, after in itertools.pairwise(chunks):
        assert after.overlap_text
        assert before.text.endswith(after.overlap_text)
        assert count(after.overlap_text) <= 10


def test_character_cuts_overlap_too() -> None:
    text = "".join(chr(ord("a") + n % 26) for n in range(600))
    chunks = split_text(text, chunk_size=40, overlap=8, count_tokens=count)
    for before, after in itertools.pairwise(chunks):
        assert len(after.overlap_text) == 32
        assert before.text.endswith(after.overlap_text)


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_bad_sizes_are_refused(size: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        split_text("text", chunk_size=size, overlap=overlap, count_tokens=count)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab .!?\n"), max_size=3000),
    size=st.integers(min_value=5, max_value=200),
    overlap_share=st.floats(min_value=0, max_value=0.5),
)
def test_chunks_cover_the_text_in_order_and_respect_the_size(
    text: str, size: int, overlap_share: float
) -> None:
    overlap = int(size * overlap_share)
    chunks = split_text(text, chunk_size=size, overlap=overlap, count_tokens=count)
    assert "".join(chunk.own_text for chunk in chunks) == text
    for chunk in chunks:
        assert count(chunk.text) <= size
        assert chunk.own_text
