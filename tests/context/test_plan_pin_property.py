"""Property: whatever mix of user messages, tool calls, plan updates (valid, failed, parallel)
and pins happens, the pinned list is provider-valid, holds the newest plan exactly once right
after the latest user message, no successful update_plan call, and folding again changes
nothing (docs/adr/0028)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from forge.context.conversation import Conversation, find_problems
from forge.context.groups import latest_user_index
from forge.context.plan import PLAN_TOOL, parse_plan
from forge.context.plan_pin import PlanPin, current_plan, fold_plan, plan_of_call
from forge.llm.messages import Message, MessageKind, ToolCall, assistant, system, tool_result, user

STATUSES = ("pending", "in_progress", "done")

plans = st.lists(
    st.tuples(st.sampled_from(["read", "fix", "test", "ship"]), st.sampled_from(STATUSES)),
    max_size=4,
).map(lambda pairs: [{"step": s, "status": t} for s, t in pairs])

steps = st.one_of(
    st.just(("user",)),
    st.just(("read",)),
    st.just(("text",)),
    st.just(("pin",)),
    st.tuples(st.just("plan"), plans),
    st.tuples(st.just("parallel"), plans),
    st.tuples(st.just("texted_plan"), plans),
)


class Builder:
    def __init__(self) -> None:
        self.chat = Conversation([system("s"), user("start")])
        self.pin = PlanPin()
        self.expected: tuple[object, ...] | None = None
        self.count = 0

    def _id(self) -> str:
        self.count += 1
        return f"c{self.count}"

    def _plan_call(self, plan: list[dict[str, str]]) -> tuple[ToolCall, Message]:
        call = ToolCall(self._id(), PLAN_TOOL, json.dumps({"plan": plan}))
        try:
            parsed = parse_plan(plan)
        except ValueError as error:
            return call, tool_result(call, str(error)).evolve(
                meta={"is_error": True, "exit_code": None}
            )
        self.expected = parsed
        return call, tool_result(call, "Plan updated.")

    def apply(self, step: tuple[object, ...]) -> None:
        kind = step[0]
        if kind == "user":
            self.chat.append(user(f"request {self.count}"))
            self.count += 1
        elif kind == "read":
            call = ToolCall(self._id(), "read_file", '{"path": "a"}')
            self.chat.append(assistant("", (call,)))
            self.chat.append(tool_result(call, "text"))
        elif kind == "text":
            self.chat.append(assistant("an answer"))
        elif kind == "pin":
            self.pin.pin(self.chat)
        else:
            plan = step[1]
            assert isinstance(plan, list)
            planned, result = self._plan_call(plan)
            if kind == "parallel":
                read = ToolCall(self._id(), "read_file", '{"path": "b"}')
                self.chat.append(assistant("", (planned, read)))
                self.chat.append(result)
                self.chat.append(tool_result(read, "text"))
            else:
                text = "my plan" if kind == "texted_plan" else ""
                self.chat.append(assistant(text, (planned,)))
                self.chat.append(result)


@settings(max_examples=200, deadline=None)
@given(st.lists(steps, max_size=25))
def test_the_pinned_list_is_valid_and_holds_the_newest_plan_once(
    sequence: list[tuple[object, ...]],
) -> None:
    builder = Builder()
    for step in sequence:
        builder.apply(step)
    builder.pin.pin(builder.chat)
    messages = list(builder.chat.messages)
    assert find_problems(messages) == []
    pinned = [i for i, m in enumerate(messages) if m.kind is MessageKind.PLAN]
    if builder.expected:
        assert pinned == [(latest_user_index(messages) or 0) + 1]
        assert current_plan(messages) == builder.expected
    else:
        assert pinned == []
    results = {m.tool_call_id: m for m in messages if m.role == "tool"}
    calls = [c for m in messages for c in m.tool_calls if c.name == PLAN_TOOL]
    assert all(plan_of_call(c, results.get(c.id)) is None for c in calls)
    again = fold_plan(messages)
    assert all(a is b for a, b in zip(again, messages, strict=True))
    assert len(again) == len(messages)
