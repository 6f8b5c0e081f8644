"""GoalBatchCompactionStrategy: complete turns, age, minimum and maximum, protected turns."""

from __future__ import annotations

import pytest

from forge.config.settings import ContextSettings
from forge.context.errors import SummarizationSkipped
from forge.context.events import ContextEvent, SummarizationProgress
from forge.context.strategies import GoalBatchCompactionStrategy
from forge.llm.errors import ServerError
from forge.llm.messages import Message, MessageKind, assistant, user
from tests.context.builders import (
    conversation,
    filler,
    ids,
    provider_for,
    run_for,
    services,
    task_start,
    words,
)
from tests.support.openai_server import Fault, OpenAIServer, Text


def strategy(**changes: object) -> GoalBatchCompactionStrategy:
    return GoalBatchCompactionStrategy(services(ContextSettings(**changes)))  # type: ignore[arg-type]


def summary(text: str) -> Message:
    return Message(role="assistant", content=text, kind=MessageKind.SUMMARY)


def finished_turn(number: int) -> list[Message]:
    return [
        user(f"request {number}: rename module m{number} " + words(40, "req")),
        summary(f"I renamed m{number}. " + words(60, "sum")),
        summary(f"I ran the tests for m{number}. " + words(60, "tst")),
    ]


def turns(count: int, start: int = 1) -> list[Message]:
    return [m for n in range(start, start + count) for m in finished_turn(n)]


def later(count: int) -> list[Message]:
    """`count` messages after the batch: the current request and the work on it."""
    return [user("the current request"), *filler(count - 1)]


def test_a_complete_turn_is_a_user_message_followed_only_by_summaries() -> None:
    unfinished = [user("request x"), summary("did part"), *filler(1)]
    chat = conversation(task_start(), turns(2), unfinished, turns(2, 5), later(25))
    # the unfinished turn breaks the run: two and two, never three in a row
    assert strategy().eligible_turns(chat.messages) == []


@pytest.mark.parametrize(("count", "fires"), [(2, False), (3, True)])
def test_needs_the_minimum_number_of_turns(count: int, fires: bool) -> None:
    chat = conversation(task_start(), filler(1), turns(count), later(25))
    assert strategy().should_run(chat, 0, 1000) is fires


@pytest.mark.parametrize(("after", "fires"), [(20, False), (21, True)])
def test_turns_must_lie_more_than_goal_batch_age_back(after: int, fires: bool) -> None:
    chat = conversation(task_start(), filler(1), turns(3), later(after))
    assert strategy().should_run(chat, 0, 1000) is fires


def test_at_most_max_turns_are_batched_oldest_first() -> None:
    chat = conversation(task_start(), filler(1), turns(8), later(25))
    chosen = strategy().eligible_turns(chat.messages)
    assert len(chosen) == 6
    assert chat[chosen[0].start].content.startswith("request 1:")


def test_pending_task_and_latest_user_message_never_join_a_batch() -> None:
    # the pending task is followed only by summaries: complete, but protected
    chat = conversation(
        task_start("first task"), summary("did it " + words(50)), turns(2), later(25)
    )
    assert strategy().eligible_turns(chat.messages) == []


async def test_run_compacts_the_turns_into_one_user_goal_batch(llm_server: OpenAIServer) -> None:
    llm_server.responder = lambda request: Text(
        "The user asked me to rename m1, m2 and m3; always run the tests after a rename."
    )
    head = task_start()
    batch = turns(3)
    rest = later(25)
    chat = conversation(head, filler(1), batch, rest)
    async with provider_for(llm_server) as provider:
        assert await strategy().run(chat, provider, run_for([])) == 3
    messages = chat.messages
    goal = messages[3]
    assert goal.kind is MessageKind.GOAL_BATCH and goal.role == "user"
    assert goal.replaces == tuple(ids(batch))
    assert "always run the tests" in goal.content
    assert ids(messages[-25:]) == ids(rest)
    assert chat.latest_user_index() != 3  # a goal batch is not a real user message
    sent = llm_server.requests[0].text()
    assert "corrections" in sent and "request 2: rename module m2" in sent
    assert chat.is_valid()


async def test_a_batch_that_would_not_shrink_is_never_tried_again(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text(words(2000, "long"))
    chosen = strategy()
    chat = conversation(task_start(), filler(1), turns(3), later(25))
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
    other = conversation(task_start(), filler(1), turns(3, 10), later(25))
    assert chosen.should_run(other, 0, 1000) is True  # only that batch is given up on


async def test_a_failed_batch_waits_for_goal_batch_age_new_messages(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Fault(503, {"error": {"message": "busy"}})
    chosen = strategy()
    chat = conversation(task_start(), filler(1), turns(3), later(25))
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
