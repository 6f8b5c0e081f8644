"""The model's plan: a short checklist it keeps with the `update_plan` tool.

This module holds the plan's shape, its validation and its text, shared by the tool (in
`forge.agent.tools.update_plan`), the pinning of the plan in the prompt (`plan_pin`) and the
clients. See docs/adr/0028-pinned-plan.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from forge.llm.messages import Message, MessageKind

PLAN_TOOL = "update_plan"
"""The tool whose calls set the plan (they are folded out of the prompt)."""

MAX_PLAN_STEPS = 20
MAX_STEP_CHARS = 200

PLAN_HEADER = (
    "[Your current plan, pinned here by Forge. It replaces every earlier version; change it "
    "only with update_plan.]"
)


class PlanStatus(StrEnum):
    """Where a step stands."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    DONE = "done"


_STATUS_ALIASES = {"completed": PlanStatus.DONE, "complete": PlanStatus.DONE}
"""Other names models use for a status (Codex-style plan tools say "completed")."""


def parse_status(value: object) -> PlanStatus:
    """The status `value` names: pending, in_progress or done, also written "in-progress",
    "in progress" or "In_Progress", and "completed" for done; ValueError otherwise."""
    if not isinstance(value, str):
        raise ValueError(value)
    key = "_".join(value.strip().lower().replace("-", " ").split())
    return _STATUS_ALIASES.get(key) or PlanStatus(key)


_MARKS = {PlanStatus.PENDING: "[ ]", PlanStatus.IN_PROGRESS: "[>]", PlanStatus.DONE: "[x]"}


@dataclass(frozen=True, slots=True)
class PlanItem:
    """One step of the plan."""

    step: str
    status: PlanStatus


Plan = tuple[PlanItem, ...]


def parse_plan(value: object) -> Plan:
    """The plan in an `update_plan` call's `plan` argument; ValueError saying what is wrong.

    Rules: a list of at most `MAX_PLAN_STEPS` objects, each a non-empty `step` (at most
    `MAX_STEP_CHARS` characters) and a `status` of pending, in_progress or done (or an alias,
    see `parse_status`); at most one step in progress. An empty list clears the plan."""
    if not isinstance(value, list):
        raise ValueError("'plan' must be a list of {step, status} objects")
    if len(value) > MAX_PLAN_STEPS:
        raise ValueError(
            f"the plan has {len(value)} steps; keep it to at most {MAX_PLAN_STEPS} short steps"
        )
    items: list[PlanItem] = []
    for number, entry in enumerate(value, start=1):
        if not isinstance(entry, Mapping):
            raise ValueError(f"step {number}: must be an object with 'step' and 'status'")
        step = entry.get("step")
        if not isinstance(step, str) or not step.strip():
            raise ValueError(f"step {number}: 'step' must be non-empty text")
        step = " ".join(step.split())
        if len(step) > MAX_STEP_CHARS:
            raise ValueError(
                f"step {number}: {len(step)} characters; keep each step under {MAX_STEP_CHARS}"
            )
        try:
            status = parse_status(entry.get("status"))
        except ValueError:
            allowed = ", ".join(s.value for s in PlanStatus)
            raise ValueError(
                f"step {number}: 'status' must be one of {allowed}, not {entry.get('status')!r}"
            ) from None
        items.append(PlanItem(step, status))
    in_progress = [
        n for n, item in enumerate(items, start=1) if item.status is PlanStatus.IN_PROGRESS
    ]
    if len(in_progress) > 1:
        steps = ", ".join(str(n) for n in in_progress)
        raise ValueError(f"steps {steps} are all in_progress; at most one step may be in progress")
    return tuple(items)


def plan_to_meta(plan: Plan) -> list[dict[str, str]]:
    """The plan as JSON-ready records (message meta, tool metadata, jsonl output)."""
    return [{"step": item.step, "status": item.status.value} for item in plan]


def plan_from_meta(records: object) -> Plan | None:
    """A plan written by `plan_to_meta`, or None if `records` is not one."""
    try:
        return parse_plan(records)
    except ValueError:
        return None


def checklist(plan: Sequence[PlanItem]) -> str:
    """One line per step: "[x] done", "[>] in progress (in progress)", "[ ] pending"."""
    return "\n".join(
        f"{_MARKS[item.status]} {item.step}"
        + (" (in progress)" if item.status is PlanStatus.IN_PROGRESS else "")
        for item in plan
    )


def progress(plan: Sequence[PlanItem]) -> str:
    """E.g. "2/5 done"."""
    done = sum(1 for item in plan if item.status is PlanStatus.DONE)
    return f"{done}/{len(plan)} done"


def plan_message(plan: Plan, *, after: str = "") -> Message:
    """The one message that carries the plan in the prompt (user role: a checklist the model
    reads, valid at the end of a prompt on every server; kind PLAN, so no strategy takes it
    for an instruction or touches it). `after`: the id of the message the `update_plan` call
    followed, kept in its meta (`PLAN_AFTER`) so a replay shows the plan where it was set."""
    meta: dict[str, object] = {"plan": plan_to_meta(plan)}
    if after:
        meta[PLAN_AFTER] = after
    return Message(
        role="user",
        content=f"{PLAN_HEADER}\n{checklist(plan)}",
        kind=MessageKind.PLAN,
        meta=meta,
    )


PLAN_AFTER = "after"
"""The plan message's meta key naming the message its `update_plan` call came after."""


def plan_of_message(message: Message) -> Plan | None:
    """The plan a PLAN message carries (None for any other message)."""
    if message.kind is not MessageKind.PLAN:
        return None
    return plan_from_meta(message.meta.get("plan"))


def plan_of_arguments(arguments: Mapping[str, Any]) -> Plan | None:
    """The plan in an `update_plan` call's parsed arguments, or None if they are invalid."""
    return plan_from_meta(arguments.get("plan"))
