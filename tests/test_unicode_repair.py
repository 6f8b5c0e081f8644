"""`forge.unicode_repair`: lone surrogates become U+FFFD, pairs stay one character, split or
not, and every replacement is counted."""

from __future__ import annotations

from forge.unicode_repair import (
    StreamRepair,
    may_hold_surrogates,
    repaired,
    repaired_value,
    replaced_characters,
)


def test_lone_surrogates_are_replaced_and_counted_pairs_are_joined() -> None:
    before = replaced_characters()
    assert repaired("a\ud800b\udc00c") == "a\ufffdb\ufffdc"
    assert repaired("\ud83d\ude00") == "\U0001f600"
    assert repaired("plain \ufffd text") == "plain \ufffd text"
    assert replaced_characters() - before == 2


def test_a_stream_keeps_a_pair_split_across_pieces_and_replaces_a_lone_one() -> None:
    stream = StreamRepair()
    out = [stream.feed(piece) for piece in ("x\ud83d", "\ude00y", "z\ud800", "w", "\udbff")]
    out.append(stream.flush())
    assert "".join(out) == "x\U0001f600yz\ufffdw\ufffd"


def test_decoded_json_values_are_repaired_throughout() -> None:
    raw = '{"k\\ud800": ["a\\udfff", {"n": 1}]}'
    assert may_hold_surrogates(raw) and not may_hold_surrogates('{"k": "\\u00e9"}')
    assert repaired_value({"k\ud800": ["a\udfff", {"n": 1}]}) == {"k\ufffd": ["a\ufffd", {"n": 1}]}
