"""The command sandbox's state as the front ends show it (docs/adr/0053, 0059 Part 5): what
the status line says of it. The sandbox itself stays in `forge.agent.sandbox`; `/sandbox`'s
lines are `session.reports.sandbox()`.
"""

from __future__ import annotations

from forge.agent.sandbox.state import SandboxState

__all__ = ["SandboxState"]
