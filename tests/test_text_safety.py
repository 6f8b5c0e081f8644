"""`forge.text_safety`: no control sequence from outside text survives, in one piece or
streamed in pieces split anywhere."""

from __future__ import annotations

import re

import pytest

from forge.text_safety import (
    MAX_HELD_CHARACTERS,
    TerminalSafeStream,
    has_terminal_controls,
    terminal_safe,
    terminal_visible,
)

OSC_52 = "\x1b]52;c;cHduZWQ=\x07"  # write "pwned" to the clipboard
OSC_0 = "\x1b]0;owned title\x07"
OSC_2 = "\x1b]2;owned title\x1b\\"
OSC_8 = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
CSI_CLEAR = "\x1b[2J\x1b[3J\x1b[H"
CSI_CURSOR = "\x1b[10;20H\x1b[5A\x1b[?25l\x1b[?1049h"
DCS = "\x1bP+q544e\x1b\\"
APC = "\x1b_Gf=100;payload\x1b\\"
BEL = "\x07"
C1 = "\x9b2J\x9d0;c1 title\x9c"
HOSTILE = [OSC_52, OSC_0, OSC_2, OSC_8, CSI_CLEAR, CSI_CURSOR, DCS, APC, BEL, C1]
_ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def assert_inert(text: str) -> None:
    """Nothing a terminal would act on: only tab and newline among the controls."""
    assert not _ANY_CONTROL.search(text), repr(text)
    assert "\r" not in text


@pytest.mark.parametrize("sequence", HOSTILE)
def test_every_hostile_sequence_is_made_inert(sequence: str) -> None:
    safe = terminal_safe(f"before {sequence} after")
    assert_inert(safe)
    assert safe.startswith("before ") and safe.endswith(" after")


def test_osc_and_string_sequences_show_visibly_so_the_user_sees_something_tried() -> None:
    assert terminal_safe(OSC_52) == "␛]52;c;cHduZWQ=␇"
    assert terminal_safe(OSC_0) == "␛]0;owned title␇"
    assert terminal_safe(DCS) == "␛P+q544e␛\\"
    assert terminal_safe(OSC_8) == "␛]8;;https://evil.example/␛\\click␛]8;;␛\\"


def test_csi_sequences_including_colours_are_removed() -> None:
    assert terminal_safe(f"a{CSI_CLEAR}b{CSI_CURSOR}c") == "abc"
    assert terminal_safe("\x1b[1;31merror\x1b[0m: \x1b[Kbad") == "error: bad"


def test_c1_controls_show_as_their_escape_form() -> None:
    assert terminal_safe(C1) == "␛[2J␛]0;c1 title␛\\"


def test_line_breaks_never_overwrite_a_line() -> None:
    assert terminal_safe("one\r\ntwo\rthree\n") == "one\ntwo\nthree\n"
    assert terminal_safe("progress 10%\rprogress 100%") == "progress 10%\nprogress 100%"


def test_other_c0_controls_and_del_become_control_pictures_tab_and_newline_stay() -> None:
    assert terminal_safe("a\x00b\x08c\x7fd") == "a␀b␈c␡d"
    assert terminal_safe("col\tcol\nrow") == "col\tcol\nrow"


def test_clean_text_is_returned_unchanged_and_safety_is_idempotent() -> None:
    text = "plain text, unicode ✓ and [markup] stay as they are\n"
    assert terminal_safe(text) is text
    assert not has_terminal_controls(text)
    hostile = "".join(HOSTILE)
    assert has_terminal_controls(hostile)
    once = terminal_safe(hostile)
    assert terminal_safe(once) == once


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_a_stream_split_anywhere_gives_the_same_text_as_the_whole(size: int) -> None:
    text = "".join(f"line {n}{sequence}\r\n" for n, sequence in enumerate(HOSTILE)) + "end\r"
    stream = TerminalSafeStream()
    pieces = [stream.feed(text[i : i + size]) for i in range(0, len(text), size)]
    streamed = "".join(pieces) + stream.flush()
    assert streamed == terminal_safe(text)
    for piece in pieces:
        assert_inert(piece)


def test_a_stream_holds_back_only_a_short_possible_sequence_start() -> None:
    stream = TerminalSafeStream()
    assert stream.feed("text") == "text"
    assert stream.feed("more \x1b[1") == "more "
    assert stream.feed("0;20") == ""
    assert stream.feed("Hrest") == "rest"
    # An endless "CSI" is not held forever: past the bound its ESC shows.
    long = "\x1b[" + "1;" * MAX_HELD_CHARACTERS
    shown = stream.feed(long)
    assert shown.startswith("␛[1;") and not has_terminal_controls(shown)


def test_text_to_approve_shows_every_control_and_removes_nothing() -> None:
    # Removed, `ESC [ ' m` would hide a quote: `echo ' a; rm -rf ~; b'` would show, and the
    # shell would run `rm -rf ~`.
    command = "echo '\x1b['m a; rm -rf ~; b'"
    assert terminal_safe(command) == "echo ' a; rm -rf ~; b'"
    assert terminal_visible(command) == "echo '␛['m a; rm -rf ~; b'"
    assert terminal_visible("a\rb\r\nc\x00\x9b") == "a␍b␍\nc␀␛["
    for sequence in HOSTILE:
        assert_inert(terminal_visible(sequence))
    assert terminal_visible("col\tcol\nrow") == "col\tcol\nrow"


def test_bidi_overrides_and_isolates_show_as_code_points_so_text_reads_as_it_is() -> None:
    # "Trojan Source": U+202E reverses what follows on screen, so `evil` would read `live`.
    hidden = "access = 'user\u202e \u2066// admin\u2069 \u2066'"
    shown = terminal_safe(hidden)
    assert "\u202e" not in shown and "\u2066" not in shown and "\u2069" not in shown
    assert shown == "access = 'user⟨U+202E⟩ ⟨U+2066⟩// admin⟨U+2069⟩ ⟨U+2066⟩'"
    assert has_terminal_controls(hidden)
    assert terminal_safe(shown) == shown  # idempotent
    # The marks that do not reorder (LRM, RLM, ALM), and joiners, stay in chat text.
    rtl = "\u05e9\u05dc\u05d5\u05dd\u200f 👩\u200d💻"
    assert terminal_safe(rtl) == rtl


def test_text_to_approve_shows_invisible_characters_too() -> None:
    # A zero-width space splits a word a reviewer reads as one; a tag character hides text.
    command = "rm -rf ./build\u200b /\u2060 \ufeff\U000e0041"
    shown = terminal_visible(command)
    assert shown == "rm -rf ./build⟨U+200B⟩ /⟨U+2060⟩ ⟨U+FEFF⟩⟨U+E0041⟩"
    assert terminal_visible("a\u202eb\u00adc") == "a⟨U+202E⟩b⟨U+00AD⟩c"
    assert terminal_visible("plain text") == "plain text"
