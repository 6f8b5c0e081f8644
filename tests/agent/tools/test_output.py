"""HeadTailBuffer: output of any length comes back as head + marker + tail, in bounded size."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from forge.agent.tools.output import HeadTailBuffer, head_and_tail_lines

MARKER = re.compile(r"\[\.\.\. (\d+) lines? \((\d+) characters\) elided \.\.\.\]")


def test_short_output_is_kept_whole() -> None:
    buffer = HeadTailBuffer(head_chars=100, tail_chars=100)
    buffer.add("hello\n")
    buffer.add("world\n")
    assert buffer.render() == "hello\nworld\n"
    assert not buffer.elided


def test_long_output_is_cut_at_line_boundaries() -> None:
    buffer = HeadTailBuffer(head_chars=20, tail_chars=20)
    text = "".join(f"line {number}\n" for number in range(1, 1001))
    for number in range(1, 1001):
        buffer.add(f"line {number}\n")
    elided_characters = len(text) - len("line 1\nline 2\n") - len("line 999\nline 1000\n")
    assert buffer.render() == (
        "line 1\nline 2\n"
        f"[... 996 lines ({elided_characters} characters) elided ...]\n"
        "line 999\nline 1000\n"
    )
    assert buffer.elided


@given(
    chunks=st.lists(st.text(alphabet="ab\n", max_size=50), max_size=60),
    head=st.integers(min_value=1, max_value=40),
    tail=st.integers(min_value=1, max_value=40),
)
def test_elided_counts_add_up(chunks: list[str], head: int, tail: int) -> None:
    """Kept characters plus the elided count always equal the input, and the kept parts are
    the input's own start and end."""
    buffer = HeadTailBuffer(head_chars=head, tail_chars=tail)
    for chunk in chunks:
        buffer.add(chunk)
    text = "".join(chunks)
    rendered = buffer.render()
    match = MARKER.search(rendered)
    if match is None:
        assert rendered == text
        return
    kept_head = rendered[: match.start()]
    kept_tail = rendered[match.end() + 1 :]
    first = text[:head]
    # The head is cut after its last full line; a head with no line break is kept whole and
    # the renderer puts the marker on a line of its own.
    if "\n" in first:
        real_head = first[: first.rfind("\n") + 1]
        assert kept_head == real_head
    else:
        real_head = first
        assert kept_head == first + "\n"
    assert text.endswith(kept_tail)
    assert len(real_head) + int(match.group(2)) + len(kept_tail) == len(text)
    elided_text = text[len(real_head) : len(text) - len(kept_tail)]
    assert int(match.group(1)) == elided_text.count("\n")
    assert len(real_head) <= head and len(kept_tail) <= tail


def test_head_and_tail_lines_fit_and_cut() -> None:
    lines = [f"{number}" for number in range(10)]
    assert head_and_tail_lines(lines, max_lines=10, max_chars=1000) == (lines, 0, [])
    head, elided, tail = head_and_tail_lines(lines, max_lines=4, max_chars=1000)
    assert (head, elided, tail) == (["0", "1"], 6, ["8", "9"])
