"""The command sandbox as the front ends name it (docs/adr/0053, 0059 Part 5): the state the
status line shows and how an approval's reason says a command would run unconfined.

The sandbox itself stays in `forge.agent.sandbox`; `/sandbox`'s lines are
`session.reports.sandbox()`.
"""

from __future__ import annotations

from forge.agent.sandbox.approval import UNCONFINED_PREFIX
from forge.agent.sandbox.state import SandboxState

__all__ = ["UNCONFINED_PREFIX", "SandboxState"]
