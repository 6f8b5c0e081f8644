"""Text from outside made safe to show in a terminal: no control sequence but Forge's own.

Model answers and reasoning, tool and MCP output, `!` output, file contents, server error
messages and resumed history are data. Printed raw, an OSC 52 sequence in them writes the
user's clipboard, OSC 0/2 renames the window, a CSI clears the screen or moves the cursor to
draw a fake prompt, DCS/APC strings talk to the terminal itself. Textual does not stop them:
its `Content` strips only BEL, BS, VT, FF and CR, and passes ESC through to the terminal.

So every front end passes outside text through `terminal_safe` where it enters display:

- CSI sequences (`ESC [ … final`: cursor moves, erase, scroll, modes, and SGR colours) are
  removed: they are noise in a chat and a command's colours are optional (docs/adr/0035).
- Every other ESC becomes a visible `␛`, so OSC, DCS, APC, PM and SOS strings show as text
  (`␛]52;c;…`) and do nothing: the user sees that something tried.
- C1 controls (U+0080 to U+009F, which some terminals obey like their ESC forms) become `␛`
  and their 7-bit letter (U+009B, CSI, shows as `␛[`).
- Other C0 controls and DEL become their Unicode control pictures (BEL shows as `␇`); tab
  and newline stay.
- `\\r\\n` becomes `\\n`, and a bare `\\r` a newline too, so no line can overwrite another.
- Bidirectional embedding, override and isolate controls (U+202A to U+202E, U+2066 to
  U+2069) show as `⟨U+202E⟩`: they reorder what follows on screen ("Trojan Source"), so
  text could read differently from what it is. The marks LRM/RLM/ALM stay in chat text.

`terminal_visible`, for text the user approves (a command, a file's new content), also shows
every invisible format character (zero-width spaces and joiners, LRM/RLM/ALM, word joiners,
the byte-order mark, soft hyphens, Unicode tag characters) as `⟨U+XXXX⟩`: what is approved
must look like what runs.

A pure module with no dependency: the core (`forge run`'s text output) and the TUI use it.
"""

from __future__ import annotations

import re

ESCAPE_PICTURE = "\u241b"
"""What an ESC that is not part of a removed CSI sequence shows as: ␛."""
MAX_HELD_CHARACTERS = 64
"""The most a stream holds back waiting for the end of a CSI sequence (a real one is short)."""

_CSI = r"\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
_BIDI = "\u202a-\u202e\u2066-\u2069"
_INVISIBLE = "\u00ad\u061c\u180e\u200b-\u200f\u2060-\u2064\ufeff\U000e0000-\U000e007f"
_UNSAFE = re.compile(rf"{_CSI}|\r\n?|[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
_CONTROL = re.compile(rf"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}{_INVISIBLE}]")
# The end of a chunk that may be the start of a CSI sequence or of a "\r\n".
_INCOMPLETE_TAIL = re.compile(r"(?:\x1b(?:\[[\x30-\x3f]*[\x20-\x2f]*)?|\r)\Z")


def _visible(control: str) -> str:
    """How one control character (or CSI sequence, or line break) is shown."""
    if control.startswith("\x1b["):
        return ""
    if control in ("\r\n", "\r"):
        return "\n"
    code = ord(control)
    if code > 0x9F:
        return f"\u27e8U+{code:04X}\u27e9"  # ⟨U+202E⟩: a format character made visible
    if code == 0x1B:
        return ESCAPE_PICTURE
    if code == 0x7F:
        return "\u2421"  # ␡
    if code >= 0x80:
        return ESCAPE_PICTURE + chr(code - 0x40)
    return chr(0x2400 + code)


def terminal_safe(text: str) -> str:
    """`text` with no control sequence left: CSI sequences removed, other controls shown
    visibly, line breaks as `\\n` (see the module docstring). Idempotent; text without
    controls comes back as is."""
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(lambda match: _visible(match.group()), text)


def terminal_visible(text: str) -> str:
    """`text` with every control character shown and nothing removed: for text the user
    approves before it runs (a command, a file's new content). `terminal_safe` removes CSI
    sequences, and with them the characters inside them (`ESC [ ' m` holds a quote a shell
    obeys), so a command shown that way is not the command that runs. Here ESC shows as `␛`
    followed by the rest as text, a CR as `␍`, other controls as in `terminal_safe`."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(
        lambda match: "\u240d" if match.group() == "\r" else _visible(match.group()), text
    )


def has_terminal_controls(text: str) -> bool:
    """Whether `text` holds anything `terminal_safe` would change."""
    return _UNSAFE.search(text) is not None


class TerminalSafeStream:
    """`terminal_safe` for text that arrives in pieces (a streamed answer, command output).

    A CSI sequence or a `\\r\\n` split between two pieces is treated as if it had arrived
    whole: the end of a piece that may start one is held back (at most
    `MAX_HELD_CHARACTERS`) until the next piece or `flush`. Anything else passes at once.
    """

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """The safe text of `piece` that can be shown now."""
        text = self._held + piece
        self._held = ""
        tail = _INCOMPLETE_TAIL.search(text)
        if tail is not None and len(text) - tail.start() <= MAX_HELD_CHARACTERS:
            self._held = text[tail.start() :]
            text = text[: tail.start()]
        return terminal_safe(text)

    def flush(self) -> str:
        """The safe text of whatever is still held (the stream ended)."""
        held, self._held = self._held, ""
        return terminal_safe(held)
