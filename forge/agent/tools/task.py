"""`task`: hand a self-contained piece of work to a subagent (docs/adr/0045-subagents.md).

The tool is offered to the main agent only. Its spec lists the agents the session knows of;
the agent loop runs `task` calls itself (`forge.agent.subagents.run`), several of one reply at
the same time, so `run` here is only reached when no subagent runner is wired (a test's bare
registry) and says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import Field

from forge.agent.tools.arguments import Boolean, ModelTool, ToolArguments, tool_schema
from forge.agent.tools.base import ToolContext, ToolError, ToolResult, first_line
from forge.llm.protocols import ToolSpec

TASK_DESCRIPTION = (
    "Hand a self-contained task to a subagent. It starts with a fresh context (its own "
    "instructions, AGENTS.md and your prompt), works with its own tools, and returns only its "
    "final report, so your context stays small. Give it everything it needs in `prompt`: it "
    "cannot see this conversation. Several `task` calls in one reply run at the same time."
)


class TaskArgs(ToolArguments):
    """`task`'s arguments."""

    agent: str = Field(description="The name of the agent to run (one of those listed).")
    prompt: str = Field(
        description="The whole task for the agent: what to do or find, and what to report."
    )
    work_ledger: Boolean = Field(
        default=False,
        description="Append this session's work ledger (files changed, commands run and "
        "their results) to the prompt.",
    )


class TaskTool(ModelTool[TaskArgs]):
    """Runs a subagent; the loop handles its calls (`forge.agent.subagents.run`)."""

    arguments_model = TaskArgs

    def __init__(self, agents: Iterable[tuple[str, str]]) -> None:
        """`agents`: (name, description) of each agent the model may call."""
        listing = "\n".join(
            f"- {name}: {first_line(description, 200)}" for name, description in agents
        )
        self._spec = ToolSpec(
            name="task",
            description=f"{TASK_DESCRIPTION}\n\nAgents:\n{listing}"
            if listing
            else TASK_DESCRIPTION,
            parameters=tool_schema(TaskArgs),
        )

    @property
    def spec(self) -> ToolSpec:  # type: ignore[override]
        """The tool as the model sees it, with the session's agents listed."""
        return self._spec

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "task explore: find the config loader"."""
        agent = arguments.get("agent") or "?"
        prompt = arguments.get("prompt")
        return (
            f"task {agent}: {first_line(prompt, 80)}"
            if isinstance(prompt, str)
            else f"task {agent}"
        )

    async def run(self, args: TaskArgs, context: ToolContext) -> ToolResult:
        """Reached only without a subagent runner: a tool error the model can read."""
        raise ToolError("subagents are not available in this session")
