"""GoalBatchCompactionStrategy: finished turns, age, minimum and maximum, what stays verbatim."""

from __future__ import annotations

from typing import Any

import pytest

from forge.config.settings import ContextSettings
from forge.context.errors import SummarizationSkipped
from forge.context.events import ContextEvent, SummarizationProgress
from forge.context.groups import user_turns
from forge.context.strategies import GoalBatchCompactionStrategy
from forge.llm.errors import ServerError
from forge.llm.messages import Message, MessageKind, assistant, user
from tests.context.builders import (
    conversation,
    filler,
    group,
    ids,
    provider_for,
    run_for,
    services,
    task_start,
    words,
)
from tests.support.openai_server import Fault, OpenAIServer, Text


def strategy(**changes: object) -> GoalBatchCompactionStrategy:
    changes.setdefault("goal_batch_min_turns", 3)
    return GoalBatchCompactionStrategy(services(ContextSettings(**changes)))  # type: ignore[arg-type]


def summary(text: str) -> Message:
    return Message(role="assistant", content=text, kind=MessageKind.SUMMARY)


def answered_turn(number: int) -> list[Message]:
    """A real finished turn: a request, tool work, and a plain answer."""
    return [
        user(f"request {number}: rename module m{number} " + words(40, "req")),
        *group("read_file", words(150, "src"), arguments={"path": f"src/m{number}.py"}),
        *group("execute_command", words(80, "tst"), arguments={"command": "pytest -q"}),
        assistant(f"Renamed m{number}; the tests pass."),
    ]


def completed_turn(number: int) -> list[Message]:
    """A finished turn that ends with the turn-ending tool."""
    return [
        user(f"request {number}: document m{number}"),
        *group("read_file", words(150, "doc"), arguments={"path": f"docs/m{number}.md"}),
        *group("task_completion", "done", arguments={"result": f"documented m{number}"}),
    ]


def turns(count: int, start: int = 1) -> list[Message]:
    return [m for n in range(start, start + count) for m in answered_turn(n)]


def later(count: int) -> list[Message]:
    """`count` messages after the batch: the current request and the work on it."""
    return [user("the current request"), *filler(count - 1)]


def test_a_turn_is_finished_by_a_plain_answer_a_turn_ending_tool_or_only_summaries() -> None:
    unfinished = [user("request x"), *group("read_file", words(100))]
    summarized = [user("request y"), summary("I did y. " + words(50))]
    chat = conversation(task_start(), answered_turn(1), completed_turn(2), summarized, unfinished)
    finished = [turn.is_complete(chat.messages) for turn in user_turns(chat.messages)]
    # the task's own turn holds only the next user message: nothing finished it
    assert finished == [False, True, True, True, False]


def test_an_unfinished_turn_breaks_a_run() -> None:
    unfinished = [user("request x"), *group("read_file", words(100))]
    chat = conversation(task_start(), turns(2), unfinished, turns(2, 5), later(25))
    assert strategy().eligible_turns(chat) == []


@pytest.mark.parametrize(("count", "fires"), [(2, False), (3, True)])
def test_needs_the_minimum_number_of_turns(count: int, fires: bool) -> None:
    chat = conversation(task_start(), turns(count), later(25))
    assert strategy().should_run(chat, 0, 1000) is fires


@pytest.mark.parametrize(("after", "fires"), [(20, False), (21, True)])
def test_turns_must_lie_more_than_goal_batch_age_back(after: int, fires: bool) -> None:
    chat = conversation(task_start(), turns(3), later(after))
    assert strategy().should_run(chat, 0, 1000) is fires


def test_at_most_max_turns_are_batched_oldest_first() -> None:
    chat = conversation(task_start(), turns(8), later(25))
    chosen = strategy().eligible_turns(chat)
    assert len(chosen) == 6
    assert chat[chosen[0].start].content.startswith("request 1:")


def test_the_latest_user_messages_turn_never_joins_a_batch() -> None:
    chat = conversation(task_start(), turns(3))
    assert strategy().eligible_turns(chat) == []  # turn 3 holds the latest message
    chat = conversation(task_start(), turns(4), later(25))
    assert len(strategy().eligible_turns(chat)) == 4


async def test_run_merges_only_the_work_and_keeps_every_request_verbatim(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text(
        "Request 1 renamed m1, request 2 documented m2, request 3 renamed m3; tests pass."
    )
    batch = [*answered_turn(1), *completed_turn(2), *answered_turn(3)]
    requests = [m for m in batch if m.role == "user"]
    ending = [m for m in batch if m.role != "user" and "task_completion" in str(m.tool_calls)]
    ending_result = batch[batch.index(ending[0]) + 1]
    rest = later(25)
    chat = conversation(task_start(), batch, rest)
    async with provider_for(llm_server) as provider:
        assert await strategy().run(chat, provider, run_for([])) == 3
    messages = chat.messages
    goals = [m for m in messages if m.kind is MessageKind.GOAL_BATCH]
    assert len(goals) == 1
    goal = goals[0]
    assert goal.role == "assistant" and "tests pass" in goal.content
    for request in requests:  # every request still there, the same object, in order
        assert request in messages
    assert [messages.index(r) for r in requests] == sorted(messages.index(r) for r in requests)
    assert ending[0] in messages and ending_result in messages  # excluded tools kept
    # the goal message stands where the last stretch of work was: after the last request
    assert messages.index(goal) == messages.index(requests[-1]) + 1
    work = [m for m in batch if m not in requests and m not in (ending[0], ending_result)]
    assert set(goal.replaces) == {m.id for m in work}
    assert ids(messages[-25:]) == ids(rest)
    sent = llm_server.requests[0].text()
    assert "request 2: document m2" in sent and "intent" in sent
    assert chat.is_valid()


async def test_a_batch_that_would_not_shrink_is_never_tried_again(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text(words(2000, "long"))
    chosen = strategy()
    chat = conversation(task_start(), turns(3), later(25))
    before = ids(chat.messages)
    async with provider_for(llm_server) as provider:
        with pytest.raises(SummarizationSkipped):
            await chosen.run(chat, provider, run_for([]))
    assert ids(chat.messages) == before
    assert chosen.should_run(chat, 0, 1000) is False  # no loop of useless requests
    for message in filler(30):
        chat.append(message)
    assert chosen.should_run(chat, 0, 1000) is False
    assert len(llm_server.requests) == 1
    other = conversation(task_start(), turns(3, 10), later(25))
    assert chosen.should_run(other, 0, 1000) is True  # only that batch is given up on


async def test_a_failed_batch_waits_for_goal_batch_age_new_messages(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Fault(503, {"error": {"message": "busy"}})
    chosen = strategy()
    chat = conversation(task_start(), turns(3), later(25))
    events: list[ContextEvent] = []
    async with provider_for(llm_server) as provider:
        with pytest.raises(ServerError):
            await chosen.run(chat, provider, run_for(events))
    progress = [(e.done, e.total, e.failed) for e in events if isinstance(e, SummarizationProgress)]
    assert progress == [(0, 3, 3)]  # three turns, in the unit of pending_items; none done
    assert chosen.should_run(chat, 0, 1000) is False
    for message in filler(19):
        chat.append(message)
    assert chosen.should_run(chat, 0, 1000) is False
    chat.append(assistant("still working"))
    assert chosen.should_run(chat, 0, 1000) is True


def test_a_turn_shortened_by_a_summary_is_examined_again() -> None:
    chosen = strategy()
    chat = conversation(task_start(), turns(3), later(25))
    assert len(chosen.eligible_turns(chat)) == 3  # each closed turn examined and remembered
    first = chosen.eligible_turns(chat)[0]
    inside = chat.messages[first.start + 1 : first.end - 1]  # the tool work of turn 1
    chat.replace_range(first.start + 1, first.end - 1, [summary("I read m1. " + words(200))])
    again = chosen.eligible_turns(chat)
    assert again and again[0].end == first.end - len(inside) + 1
    assert chat[again[0].end].content.startswith("request 2:")


def test_observations_belong_to_the_turn_they_arrive_in() -> None:
    observed = [
        user("request 1: look around " + words(40, "req")),
        assistant("ls"),
        Message(role="user", content=words(300, "out"), kind=MessageKind.OBSERVATION),
        assistant("Looked around; nothing to change."),
    ]
    chat = conversation(task_start(), observed, turns(1, 2), later(25))
    chosen = strategy(goal_batch_min_turns=2)
    batch = chosen.eligible_turns(chat)
    assert [chat[t.start].content.split(":")[0] for t in batch] == ["request 1", "request 2"]
    assert batch[0].end == batch[1].start  # the observation did not end the first turn


def test_a_check_with_nothing_new_to_age_examines_no_old_turn_again() -> None:
    chosen = strategy(goal_batch_min_turns=500, goal_batch_max_turns=500)
    chat = conversation(task_start(), turns(200), later(25))
    examined: list[int] = []
    closed_turn = chosen._closed_turn

    def counting(conversation: Any, start: int, end: int) -> Any:
        examined.append(start)
        return closed_turn(conversation, start, end)

    chosen._closed_turn = counting  # type: ignore[method-assign]
    assert chosen.should_run(chat, 0, 1000) is False  # 200 old finished turns: too few
    assert len(examined) == 201  # the task's own turn and the 200
    for number in range(3):
        examined.clear()
        chat.append(assistant(f"working {number}"))
        assert chosen.should_run(chat, 0, 1000) is False
        assert examined == []  # the 200 turns were not looked at again
