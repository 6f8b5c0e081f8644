"""ThresholdSummarizationStrategy: trigger boundary, what is kept, protected messages, no loop,
the summarizer window."""

from __future__ import annotations

import pytest

from forge.config.settings import ContextSettings
from forge.context.errors import SummarizationSkipped
from forge.context.ledger import Ledger
from forge.context.strategies import ThresholdSummarizationStrategy
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
from tests.support.openai_server import OpenAIServer, RecordedRequest, Text


def strategy(settings: ContextSettings | None = None) -> ThresholdSummarizationStrategy:
    return ThresholdSummarizationStrategy(services(settings))


def work(count: int) -> list[Message]:
    messages: list[Message] = []
    for number in range(count):
        messages.extend(
            group(
                "execute_command",
                words(200, f"r{number:02d}"),
                arguments={"command": f"make step{number}"},
            )
        )
    return messages


@pytest.mark.parametrize(("current", "fires"), [(7999, False), (8000, True)])
def test_fires_at_threshold_trigger_of_the_budget(current: int, fires: bool) -> None:
    chat = conversation(task_start(), work(2))
    assert strategy().should_run(chat, current, 10_000) is fires


def test_needs_four_non_system_messages() -> None:
    three = conversation(task_start(), assistant("a"), assistant("b"))
    four = conversation(task_start(), assistant("a"), assistant("b"), assistant("c"))
    assert strategy().should_run(three, 10_000, 10_000) is False
    assert strategy().should_run(four, 10_000, 10_000) is True


async def test_older_part_becomes_one_summary_and_the_recent_tail_stays(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("I ran make for every step; all passed.")
    head = task_start()
    older = work(7)
    recent = work(2)  # a quarter of the prompt's tokens stays verbatim
    chat = conversation(head, older, recent)
    async with provider_for(llm_server) as provider:
        summarized = await strategy().run(chat, provider, run_for([], instructions="keep make"))
    assert len(llm_server.requests) == 1
    assert "keep make" in llm_server.requests[0].text()
    messages = chat.messages
    assert ids(messages[:2]) == ids(head)
    summary = messages[2]
    assert summary.kind is MessageKind.SUMMARY and summary.role == "assistant"
    assert set(ids(older)) <= set(summary.replaces)
    assert summarized == 1  # one stretch, the unit of its progress events
    # The ledger is pinned apart (ADR 0050); the summary keeps its record in meta.
    assert "`make step0` (exit code unknown)" in Ledger.from_meta(summary.meta["ledger"]).render()
    assert ids(messages[-4:]) == ids(recent)
    assert chat.is_valid()


async def test_latest_user_message_and_excluded_tools_are_never_summarized(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("I did the earlier work.")
    latest = user("now also update the changelog")
    question = group("ask_question", "The user answered: yes", arguments={"question": "ok?"})
    chat = conversation(task_start(), work(4), question, work(4), latest, work(6), work(1))
    async with provider_for(llm_server) as provider:
        await strategy().run(chat, provider, run_for([]))
    messages = chat.messages
    assert latest in messages
    assert all(m in messages for m in question)
    summaries = [m for m in messages if m.kind is MessageKind.SUMMARY]
    assert len(summaries) == 3  # one per stretch between protected messages
    assert len(llm_server.requests) == 3
    for request in llm_server.requests:
        assert "now also update the changelog" not in request.text()
        assert "The user answered" not in request.text()
    assert chat.is_valid()


async def test_groups_are_never_split(llm_server: OpenAIServer) -> None:
    llm_server.responder = lambda request: Text("summary")
    steps = work(6)
    chat = conversation(task_start(), steps, filler(3))
    async with provider_for(llm_server) as provider:
        await strategy().run(chat, provider, run_for([]))
    kept = set(ids(chat.messages))
    for call, result in zip(steps[::2], steps[1::2], strict=True):
        assert (call.id in kept) == (result.id in kept)
    assert any(m.id not in kept for m in steps)
    assert chat.is_valid()


async def test_a_summary_that_does_not_shrink_is_skipped_and_reported(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text(words(5000, "long"))
    chat = conversation(task_start(), work(6), work(1))
    before = ids(chat.messages)
    async with provider_for(llm_server) as provider:
        with pytest.raises(SummarizationSkipped):
            await strategy().run(chat, provider, run_for([]))
    assert ids(chat.messages) == before


async def test_nothing_to_summarize_is_skipped_without_a_call(llm_server: OpenAIServer) -> None:
    chat = conversation(task_start(), work(1))
    async with provider_for(llm_server) as provider:
        with pytest.raises(SummarizationSkipped):
            await strategy().run(chat, provider, run_for([]))
    assert llm_server.requests == []


async def test_a_stretch_too_large_for_the_summarizer_is_pruned_first(
    llm_server: OpenAIServer,
) -> None:
    def respond(request: RecordedRequest) -> Text:
        return Text("I ran the steps.")

    llm_server.responder = respond
    chosen = strategy()
    chosen.services.summarizer.single_call_limit = 1500
    chat = conversation(task_start(), work(12), work(1))
    async with provider_for(llm_server) as provider:
        await chosen.run(chat, provider, run_for([]))
    sent = "".join(request.text() for request in llm_server.requests)
    assert "output pruned to save context" in sent
    assert len(llm_server.requests) == 1  # pruned enough to fit one call
    assert chat.is_valid()


async def test_the_summary_before_the_stretch_is_passed_for_continuity(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("I ran the later steps.")
    earlier = Message(
        role="assistant",
        content="[Summary of my earlier work]\nI fixed the parser in src/parse.py.",
        kind=MessageKind.SUMMARY,
    )
    latest = user("now the docs, please")
    chat = conversation(task_start(), earlier, latest, work(6), work(1))
    async with provider_for(llm_server) as provider:
        await strategy().run(chat, provider, run_for([]))
    assert len(llm_server.requests) == 1
    sent = llm_server.requests[0].messages[-1]["content"]
    prior = sent.split("<prior_summary>\n", 1)[1].split("\n</prior_summary>", 1)[0]
    assert "I fixed the parser in src/parse.py." in prior
    assert chat[2] is earlier and chat[3] is latest
    assert chat.is_valid()


async def test_a_stretch_still_too_large_after_pruning_is_map_reduced(
    llm_server: OpenAIServer,
) -> None:
    def respond(request: RecordedRequest) -> Text:
        return Text("I thought through the design at length.")

    llm_server.responder = respond
    chosen = strategy()
    chosen.services.summarizer.single_call_limit = 1500
    # long reasoning with no tool output to prune: only map-reduce can fit it
    thoughts = [assistant(f"Thought {n}. " + words(500, f"t{n:02d}")) for n in range(8)]
    chat = conversation(task_start(), thoughts, work(1))
    async with provider_for(llm_server) as provider:
        await chosen.run(chat, provider, run_for([], instructions="keep the design"))
    tasks = [r.messages[-1]["content"].split("\n", 1)[0] for r in llm_server.requests]
    assert sum(task.startswith("Task: summarize part") for task in tasks) >= 3
    assert tasks[-1].startswith("Task: write the final")
    assert "keep the design" in llm_server.requests[-1].text()
    for request in llm_server.requests:
        material = request.messages[-1]["content"].split("<material>\n", 1)[1]
        assert len(material) // 4 <= 1500 + 10
    summary = chat[2]
    assert summary.kind is MessageKind.SUMMARY and summary.meta["level"] == "map_reduce"
    assert chat.is_valid()
