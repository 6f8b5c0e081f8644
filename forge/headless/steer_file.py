"""`forge run --steer-file PATH`: steering lines for a running task, from a file or a FIFO
(issue 40, docs/adr/0057).

A CI wrapper (or a person in another terminal) appends lines to PATH — a regular file, read
as it grows, or a FIFO, opened again after each writer closes it. Each non-empty line is one
message steered into the run's turn: added as a user message at the turn's next safe point
(after the running tool call, before the next request) and reported like any event
(`[steering] …` on stderr, a `steering_added` record). Lines read after the turn ended are
not sent (the run is over). The reader is a daemon thread: it ends with the process.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

POLL_SECONDS = 0.1
"""How often a regular file is read again for new lines."""


def start_steer_reader(path: Path, deliver: Callable[[str], None]) -> threading.Thread:
    """Read steering lines from `path` in a daemon thread; `deliver` gets each (stripped of
    its line end), from that thread."""
    thread = threading.Thread(
        target=_read_forever, args=(path, deliver), daemon=True, name="forge-steer-file"
    )
    thread.start()
    return thread


def check_steer_file(path_text: str) -> Path:
    """The path, if it is a readable file or FIFO; ValueError says why not."""
    path = Path(path_text).expanduser()
    try:
        mode = path.stat().st_mode
    except OSError as error:
        raise ValueError(f"--steer-file {path_text}: {error.strerror}") from None
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        raise ValueError(f"--steer-file {path_text}: not a file or FIFO")
    if not os.access(path, os.R_OK):
        raise ValueError(f"--steer-file {path_text}: not readable")
    return path


def _read_forever(path: Path, deliver: Callable[[str], None]) -> None:
    with contextlib.suppress(OSError):
        if stat.S_ISFIFO(path.stat().st_mode):
            while True:  # each writer's lines; EOF when it closes, then wait for the next
                with path.open(encoding="utf-8", errors="replace") as fifo:
                    for line in fifo:
                        _deliver_line(line, deliver)
        else:
            with path.open(encoding="utf-8", errors="replace") as file:
                partial = ""
                while True:
                    chunk = file.readline()
                    if not chunk:
                        time.sleep(POLL_SECONDS)
                        continue
                    partial += chunk
                    if partial.endswith("\n"):  # a line still being written waits
                        _deliver_line(partial, deliver)
                        partial = ""


def _deliver_line(line: str, deliver: Callable[[str], None]) -> None:
    text = line.rstrip("\r\n")
    if text.strip():
        deliver(text)
