"""Tool names the front ends show apart (docs/adr/0059 Part 5): the user's own `!command`
call and the subagent tool. Constants of the engine, named here so a front end need not
import it.
"""

from __future__ import annotations

from forge.agent.input.shell_escape import USER_COMMAND_TOOL
from forge.agent.subagents.definitions import TASK_TOOL

__all__ = ["TASK_TOOL", "USER_COMMAND_TOOL"]
