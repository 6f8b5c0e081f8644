"""Asking for the user's attention when a turn ends or waits for an approval (docs/adr/0049).

`ui.notify` chooses: `off`, `bell` (a terminal bell, BEL) or `desktop` (the bell, plus a
desktop notice while the terminal has said it is not focused). The desktop notice is OSC 777
(`notify;title;body`) on terminals known to read it, OSC 9 elsewhere; when the terminal never
reported its focus (no focus events), only the bell rings — a notice the user is looking at
is noise. Front ends decide when; this module says what is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from forge.text_safety import terminal_safe

AttentionReason = Literal["turn_end", "approval", "question"]
NotifyMode = Literal["off", "bell", "desktop"]

BELL = "\a"
TITLE = "Forge"

_OSC_777_TERMINALS = ("foot", "rxvt", "ghostty", "contour")
"""`TERM` or `TERM_PROGRAM` prefixes of terminals that show OSC 777 notices (not OSC 9)."""


def attention_text(reason: AttentionReason, detail: str = "") -> str:
    """The notice's words: "The turn ended (completed)", "Waiting for your approval: …"."""
    if reason == "question":
        return "Waiting for your answer"
    if reason == "approval":
        return f"Waiting for your approval: {detail}" if detail else "Waiting for your approval"
    return f"The turn ended ({detail})" if detail else "The turn ended"


def _printable(text: str) -> str:
    # No control characters and no ";" (OSC 777 separates its fields with it): a tool name or
    # a server's error cannot end the sequence early or start another.
    return " ".join(terminal_safe(text).replace(";", ",").split())[:200]


def desktop_sequence(message: str, environ: Mapping[str, str]) -> str:
    """The OSC sequence that asks the terminal for a desktop notice saying `message`."""
    body = _printable(message)
    names = (environ.get("TERM", ""), environ.get("TERM_PROGRAM", "").lower())
    if any(name.startswith(_OSC_777_TERMINALS) for name in names):
        return f"\x1b]777;notify;{TITLE};{body}\x1b\\"
    return f"\x1b]9;{TITLE}: {body}\x1b\\"


def terminal_signal(
    mode: NotifyMode, message: str, *, unfocused: bool, environ: Mapping[str, str]
) -> str:
    """What to write to the terminal: nothing, the bell, or the bell and a desktop notice
    (`unfocused`: the terminal reported that it lost focus and has not regained it)."""
    if mode == "off":
        return ""
    if mode == "desktop" and unfocused:
        return BELL + desktop_sequence(message, environ)
    return BELL
