"""The plan's pure rules: validation, folding `update_plan` calls out, one pinned plan message
right after the latest user message, and the strategies' view of it (docs/adr/0028)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from forge.context.conversation import Conversation, find_problems
from forge.context.groups import Turn, protected_positions, user_turns
from forge.context.plan import (
    PLAN_HEADER,
    PLAN_TOOL,
    PlanItem,
    PlanStatus,
    checklist,
    parse_plan,
    plan_message,
)
from forge.context.plan_pin import PlanPin, current_plan, fold_plan
from forge.llm.messages import Message, MessageKind, ToolCall, assistant, system, tool_result, user

PENDING, ACTIVE, DONE = PlanStatus.PENDING, PlanStatus.IN_PROGRESS, PlanStatus.DONE


def steps(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"step": step, "status": status} for step, status in pairs]


_ids = iter(range(1, 10_000))


def call(name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(f"c{next(_ids)}", name, json.dumps(arguments))


def plan_group(plan: list[dict[str, str]], *, text: str = "", error: bool = False) -> list[Message]:
    planned = call(PLAN_TOOL, {"plan": plan})
    result = tool_result(planned, "Plan updated.")
    if error:
        result = result.evolve(meta={"is_error": True, "exit_code": None})
    return [assistant(text, (planned,)), result]


def read_group(path: str = "a.py") -> list[Message]:
    read = call("read_file", {"path": path})
    return [assistant("", (read,)), tool_result(read, f"contents of {path}")]


def plan_messages(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.kind is MessageKind.PLAN]


def plan_calls(messages: list[Message]) -> list[ToolCall]:
    return [c for m in messages for c in m.tool_calls if c.name == PLAN_TOOL]


def head() -> list[Message]:
    return [system("You are Forge."), user("Fix the parser")]


FIRST = steps(("Read the parser", "in_progress"), ("Fix it", "pending"))
SECOND = steps(("Read the parser", "done"), ("Fix it", "in_progress"))


# --- validation ------------------------------------------------------------------------------


def test_a_plan_parses_into_items_with_their_status() -> None:
    assert parse_plan(FIRST) == (
        PlanItem("Read the parser", ACTIVE),
        PlanItem("Fix it", PENDING),
    )
    assert parse_plan([]) == ()


@pytest.mark.parametrize(
    ("plan", "says"),
    [
        (steps(("a", "in_progress"), ("b", "in_progress")), "at most one step may be in progress"),
        (steps(("a", "started")), "'status' must be one of pending, in_progress, done"),
        ([{"step": "  ", "status": "done"}], "step 1: 'step' must be non-empty text"),
        (steps(*[(f"s{n}", "pending") for n in range(21)]), "at most 20"),
        ("do it all", "must be a list"),
    ],
)
def test_an_invalid_plan_is_refused_with_what_to_fix(plan: object, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_plan(plan)


def test_the_checklist_marks_each_status() -> None:
    plan = parse_plan(steps(("a", "done"), ("b", "in_progress"), ("c", "pending")))
    assert checklist(plan) == "[x] a\n[>] b (in progress)\n[ ] c"


# --- folding ---------------------------------------------------------------------------------


def test_without_a_plan_the_list_comes_back_unchanged() -> None:
    messages = [*head(), *read_group(), assistant("done")]
    folded = fold_plan(messages)
    assert all(a is b for a, b in zip(folded, messages, strict=True))


def test_an_update_becomes_one_plan_message_after_the_latest_user_message() -> None:
    messages = [*head(), *read_group(), *plan_group(FIRST), *read_group("b.py")]
    folded = fold_plan(messages)
    assert not plan_calls(folded)
    roles = ["system", "user", "user", "assistant", "tool", "assistant", "tool"]
    assert [m.role for m in folded] == roles
    pinned = folded[2]
    assert pinned.kind is MessageKind.PLAN
    assert pinned.content == f"{PLAN_HEADER}\n[>] Read the parser (in progress)\n[ ] Fix it"
    assert find_problems(folded) == []
    # The prefix up to the latest user message is the very same objects: still cacheable.
    assert folded[:2] == messages[:2]


def test_only_the_newest_plan_is_kept_and_every_update_call_goes() -> None:
    messages = [*head(), *plan_group(FIRST), *read_group(), *plan_group(SECOND)]
    folded = fold_plan(messages)
    assert len(plan_messages(folded)) == 1
    assert current_plan(folded) == parse_plan(SECOND)
    assert not plan_calls(folded) and not [m for m in folded if m.name == PLAN_TOOL]
    assert find_problems(folded) == []


def test_a_parallel_call_keeps_its_result_and_the_message_its_text() -> None:
    planned, read = call(PLAN_TOOL, {"plan": FIRST}), call("read_file", {"path": "a.py"})
    messages = [
        *head(),
        assistant("Reading first.", (planned, read)),
        tool_result(planned, "Plan updated."),
        tool_result(read, "contents"),
    ]
    folded = fold_plan(messages)
    kept = folded[3]
    assert kept.content == "Reading first." and kept.tool_calls == (read,)
    assert kept.id != messages[2].id  # a changed message is a new message
    assert folded[4].tool_call_id == read.id
    assert find_problems(folded) == []


def test_an_assistant_message_with_text_and_only_the_plan_call_keeps_its_text() -> None:
    messages = [*head(), *plan_group(FIRST, text="Here is my plan.")]
    folded = fold_plan(messages)
    assert [m.content for m in folded if m.role == "assistant"] == ["Here is my plan."]
    assert folded[-1].tool_calls == ()
    assert find_problems(folded) == []


def test_a_failed_update_stays_visible_until_a_newer_plan_replaces_it() -> None:
    bad = steps(("a", "in_progress"), ("b", "in_progress"))
    messages = [*head(), *plan_group(FIRST), *plan_group(bad, error=True)]
    folded = fold_plan(messages)
    assert len(plan_calls(folded)) == 1  # the failed one: the model must see its error
    assert current_plan(folded) == parse_plan(FIRST)
    later = fold_plan([*folded, *plan_group(SECOND)])
    assert not plan_calls(later)
    assert current_plan(later) == parse_plan(SECOND)


def test_an_unanswered_update_is_left_alone() -> None:
    planned = call(PLAN_TOOL, {"plan": FIRST})
    messages = [*head(), assistant("", (planned,))]
    assert fold_plan(messages)[-1].tool_calls == (planned,)


def test_a_new_user_message_moves_the_plan_after_it() -> None:
    first = fold_plan([*head(), *plan_group(FIRST), *read_group(), assistant("done")])
    messages = [*first, user("Now add a test")]
    folded = fold_plan(messages)
    assert [m.kind for m in folded[-2:]] == [MessageKind.NORMAL, MessageKind.PLAN]
    assert folded[-2].content == "Now add a test"
    assert len(plan_messages(folded)) == 1
    assert find_problems(folded) == []


def test_an_empty_plan_clears_it() -> None:
    messages = fold_plan([*head(), *plan_group(FIRST)])
    folded = fold_plan([*messages, *plan_group([])])
    assert plan_messages(folded) == [] and not plan_calls(folded)
    assert current_plan(folded) is None  # nothing left to pin


def test_folding_is_idempotent_and_keeps_the_plan_message_object() -> None:
    once = fold_plan([*head(), *plan_group(FIRST), *read_group()])
    twice = fold_plan(once)
    assert all(a is b for a, b in zip(once, twice, strict=True))


def test_pin_replaces_one_stretch_and_then_does_nothing_until_it_matters() -> None:
    chat = Conversation([*head(), *read_group()])
    pin = PlanPin()
    assert pin.pin(chat) is False
    for message in plan_group(FIRST):
        chat.append(message)
    before = chat.messages
    assert pin.pin(chat) is True
    assert chat.messages[:2] == before[:2]
    assert chat[2].kind is MessageKind.PLAN and chat.is_valid()
    version = chat.version
    for message in read_group("b.py"):
        chat.append(message)
    assert pin.pin(chat) is False and chat.version == version + 2
    chat.append(user("next"))
    assert pin.pin(chat) is True and chat[-1].kind is MessageKind.PLAN


# --- how strategies see the plan -----------------------------------------------------------


def test_the_plan_is_protected_and_belongs_to_the_latest_turn() -> None:
    messages = fold_plan([*head(), *plan_group(FIRST), *read_group(), assistant("done")])
    at = messages.index(plan_messages(messages)[0])
    assert at in protected_positions(messages, ())
    assert user_turns(messages) == [Turn(1, len(messages))]


def test_a_turn_holding_only_the_plan_is_not_finished() -> None:
    messages = [*head(), plan_message(parse_plan(FIRST))]
    assert not Turn(1, 3).is_complete(messages)
