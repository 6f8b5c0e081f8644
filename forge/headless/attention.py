"""`forge run`'s notice that the run is over (docs/adr/0049): the terminal bell on stderr
when stderr is a terminal and `ui.notify` is not `off` — a script reads the exit status and
the `result` record; a person who started a long run in a terminal hears it end. No desktop
notice: a headless run cannot learn whether its terminal is focused.
"""

from __future__ import annotations

from typing import TextIO

from forge.session.attention import BELL, NotifyMode


def ring_at_end(mode: NotifyMode, stream: TextIO) -> None:
    """Ring the bell on `stream` when it is a terminal and `mode` allows it."""
    try:
        if mode == "off" or not stream.isatty():
            return
        stream.write(BELL)
        stream.flush()
    except (OSError, ValueError):  # a closed or vanished terminal (SIGHUP)
        return
