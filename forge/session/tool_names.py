"""Tool names and answers the front ends treat specially (docs/adr/0059 Part 5): the user's
own `!command` call and the subagent tool, and what `forge run` answers a question nobody
can answer. Constants of the engine, named here so a front end need not import it.
"""

from __future__ import annotations

from forge.agent.input.shell_escape import USER_COMMAND_TOOL
from forge.agent.subagents.definitions import TASK_TOOL
from forge.agent.turn.answers import NO_USER_ANSWER

__all__ = ["NO_USER_ANSWER", "TASK_TOOL", "USER_COMMAND_TOOL"]
