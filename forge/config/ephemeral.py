"""The process-wide switch of `forge run --ephemeral`: write nothing that outlives the run.

One switch, asked by every writer of a file Forge would keep — the session log, checkpoints,
the summary archive, the log file, the context-window cache, the tokenizer data cache (and
any later one, e.g. a trust store): with it on they keep what they need in memory, or skip
it. `forge run --ephemeral` turns it on before anything is built (docs/adr/0015).
"""

from __future__ import annotations

_switch = {"on": False}


def set_ephemeral(on: bool = True) -> None:
    """Turn the switch on (or off again: tests)."""
    _switch["on"] = on


def is_ephemeral() -> bool:
    """Whether this process must leave no file behind (`forge run --ephemeral`)."""
    return _switch["on"]
