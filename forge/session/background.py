"""The session's background commands as the front ends see them (issue 40, docs/adr/0057):
the commands the model started with `background: true` or moved there, each with its state
and output (`/tasks`, ACP's cards that stay in progress)."""

from __future__ import annotations

from forge.agent.tools.background import BackgroundCommand, BackgroundCommands

__all__ = ["BackgroundCommand", "BackgroundCommands"]
