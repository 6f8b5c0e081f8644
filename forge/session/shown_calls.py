"""What a chat shows of the tool calls beyond their events (docs/adr/0059 Part 5): the
added and removed lines of an edit's diff, and the calls an interrupted turn never ran (no
event names them; a resumed session shows them cancelled too).

Front ends import this module where they need it, not at start (the first frame needs
neither).
"""

from __future__ import annotations

from forge.agent.tools.diffs import diff_stats
from forge.agent.turn.interruption import calls_not_run

__all__ = ["calls_not_run", "diff_stats"]
