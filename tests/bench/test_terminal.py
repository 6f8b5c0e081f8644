"""The keystroke probes' pure parts, the CPU reading, and the terminal driver in real tmux."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from bench.terminal import (
    MARKER,
    WINDOW,
    Terminal,
    cpu_seconds,
    probe_keys,
    process_cpu_seconds,
    shown_count,
    window_ending,
)


def test_probe_windows_are_unique_and_avoid_the_given_texts() -> None:
    avoid = ["the quick brown fox"]
    keys = probe_keys(24, avoid=avoid)
    typed = MARKER + keys
    windows = [window_ending(typed, end) for end in range(len(MARKER) + 1, len(typed) + 1)]
    assert len(keys) == 24
    assert len(set(windows)) == len(windows)
    assert all(len(window) == WINDOW for window in windows)
    assert not any(window in avoid[0] for window in windows)


def test_probe_keys_change_when_a_text_holds_one_of_their_windows() -> None:
    first = probe_keys(10)
    window = window_ending(MARKER + first, len(MARKER) + 5)
    assert probe_keys(10, avoid=[f"... {window} ..."]) != first


def test_shown_count_finds_the_newest_typed_text_on_screen() -> None:
    typed = MARKER + "bcdfgh"
    screen = f"header\n> {MARKER}bcd\nfooter"
    assert shown_count(screen, typed) == len(MARKER) + 3
    assert shown_count(f"> {typed}", typed) == len(typed)
    assert shown_count("nothing typed yet", typed) == 0


def test_shown_count_reads_a_horizontally_scrolled_input() -> None:
    typed = MARKER + "bcdfghjklm"
    screen = "> ...dfghjklm"  # the start scrolled out of view
    assert shown_count(screen, typed) == len(typed)


def test_cpu_seconds_parses_proc_stat_even_with_parentheses_in_the_name() -> None:
    fields_after_name = ["S"] + ["0"] * 10 + ["250", "50"] + ["0"] * 20
    stat = "1234 (python (x) y) " + " ".join(fields_after_name)
    assert cpu_seconds(stat, 100) == 3.0


def test_process_cpu_seconds_reads_this_process() -> None:
    assert process_cpu_seconds(os.getpid()) >= 0.0


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_probes_see_keys_typed_into_a_real_terminal(tmp_path: Path) -> None:
    reader = tmp_path / "echo.py"
    reader.write_text(
        "import sys, termios, tty\n"
        "tty.setcbreak(sys.stdin.fileno())\n"
        "print('ready', flush=True)\n"
        "while True:\n"
        "    sys.stdout.write(sys.stdin.read(1)); sys.stdout.flush()\n",
        encoding="utf-8",
    )
    keys = probe_keys(5)
    with Terminal(80, 10) as terminal:
        terminal.launch(f"{sys.executable} {reader}", {"PATH": os.environ["PATH"]}, tmp_path)
        terminal.wait_for(lambda screen: "ready" in screen, 30)
        result = terminal.probe(keys, interval=0.05, deadline=10**9)
        assert MARKER + keys in terminal.capture()
    assert result.timeouts == 0
    assert len(result.latencies) == 5
    assert all(latency >= 0 for latency in result.latencies)
