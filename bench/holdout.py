"""The fixed split of the replay's sessions into a tuning part and a held-back part (issue 37).

Forge's constants may be tuned (`python -m bench.sweep`, or by hand) on the **tuning** part
only; the **held-back** part is reported beside it and never tuned on, so a result that holds
only where it was tuned shows. The rule depends on the session's name alone, so it is fixed as
the corpus grows and needs no list kept by hand:
- the five sessions of the shared corpus (`origin` `shared`) are tuning sessions (Forge's
  earlier defaults were tuned on them);
- any other session is held back when the first byte of the SHA-256 of its name
  (`*.messages.json` without the suffix) is odd, and is a tuning session otherwise;
- the combined session is its own group.
ADR 0038's sweep (issue 23) saw all 28 sessions of the time; the split holds from issue 37 on.
"""

from __future__ import annotations

import hashlib

from bench.sessions import COMBINED, SHARED

TUNING = "tuning"
HELD_BACK = "held-back"


def part(session: str, origin: str) -> str:
    """`tuning`, `held-back`, or `combined` for the combined session."""
    if session == COMBINED or origin == COMBINED:
        return COMBINED
    if origin == SHARED:
        return TUNING
    return HELD_BACK if hashlib.sha256(session.encode("utf-8")).digest()[0] % 2 else TUNING
