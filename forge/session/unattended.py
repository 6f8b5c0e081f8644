"""What a run nobody watches (`forge run`) answers and recognises (docs/adr/0059 Part 5):
the answer to a question nobody can answer, and how an approval's reason begins when the
command would run outside the sandbox (refused with its own words).
"""

from __future__ import annotations

from forge.agent.sandbox.approval import UNCONFINED_PREFIX
from forge.agent.turn.answers import NO_USER_ANSWER

__all__ = ["NO_USER_ANSWER", "UNCONFINED_PREFIX"]
