"""`update_plan`: the model keeps a short checklist of its work.

The call needs no approval and changes nothing outside the conversation. The plan it sets is
pinned in the prompt by `forge.context.plan_pin` (the call itself is folded away), shown in the
TUI's status pane and in `forge run`'s output (`metadata["plan"]`). See docs/adr/0028.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from forge.agent.tools.arguments import ModelTool, ToolArguments, description_first, tool_schema
from forge.agent.tools.base import ToolContext, ToolError, ToolResult
from forge.context.plan import (
    MAX_PLAN_STEPS,
    PLAN_TOOL,
    checklist,
    parse_plan,
    plan_to_meta,
    progress,
)
from forge.llm.protocols import ToolSpec


class PlanStepArgs(ToolArguments):
    """One step of `update_plan`'s plan."""

    step: str = Field(description="One short step.")
    # No enum: aliases such as "completed" are accepted too (forge.context.plan.parse_status),
    # so the check is there.
    status: str = Field(description="pending, in_progress or done.")


class UpdatePlanArgs(ToolArguments):
    """`update_plan`'s arguments."""

    plan: list[PlanStepArgs] = Field(
        description="The whole plan, in order.", json_schema_extra=description_first
    )
    explanation: str | None = Field(
        default=None, description="Optional: why the plan changed, in one sentence."
    )


class UpdatePlanTool(ModelTool[UpdatePlanArgs]):
    """Replaces the plan with the given steps; echoes it as a checklist."""

    spec = ToolSpec(
        name=PLAN_TOOL,
        description=(
            "Keep a short plan for multi-step work: send the whole checklist each time "
            f"(at most {MAX_PLAN_STEPS} short steps), each pending, in_progress or done, with "
            "at most one step in_progress. Update it as you start and finish steps. The "
            "current plan stays visible to you after the latest user message; an empty "
            "list clears it. Skip it for simple one-step requests."
        ),
        parameters=tool_schema(UpdatePlanArgs),
    )
    arguments_model = UpdatePlanArgs

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "update_plan: 2/5 done"."""
        plan = arguments.get("plan")
        try:
            return f"{self.name}: {progress(parse_plan(plan))}"
        except ValueError:
            return self.name

    async def run(self, args: UpdatePlanArgs, context: ToolContext) -> ToolResult:
        """Validate the plan; the result is the checklist, metadata holds "plan" (a list of
        {step, status}) and "explanation"."""
        try:
            plan = parse_plan([step.model_dump() for step in args.plan])
        except ValueError as error:
            raise ToolError(f"update_plan: {error}") from None
        explanation = (args.explanation or "").strip()
        if not plan:
            content = "Plan cleared."
        else:
            content = f"Plan updated ({progress(plan)}):\n{checklist(plan)}"
        return ToolResult(
            content=content, metadata={"plan": plan_to_meta(plan), "explanation": explanation}
        )
