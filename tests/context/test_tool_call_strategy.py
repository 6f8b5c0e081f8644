"""ToolCallSummarizationStrategy: buffer, triggers at their boundaries, exclusions, order,
parallel runs bounded by the setting, progress, partial failure, validity."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from forge.config.settings import ContextSettings
from forge.config.store import load_settings
from forge.context import prompts
from forge.context.errors import PartialSummarizationError
from forge.context.events import ContextEvent, SummarizationProgress
from forge.context.ledger import Ledger
from forge.context.strategies import ToolCallSummarizationStrategy
from forge.llm.errors import ServerError
from forge.llm.messages import Message, MessageKind, ToolCall, assistant, tool_result, user
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
from tests.support.openai_server import Fault, OpenAIServer, RecordedRequest, Text


def strategy(**changes: object) -> ToolCallSummarizationStrategy:
    return ToolCallSummarizationStrategy(services(ContextSettings(**changes)))  # type: ignore[arg-type]


def groups(count: int, name: str = "read_file") -> list[Message]:
    messages: list[Message] = []
    for number in range(count):
        messages.extend(
            group(name, words(150, f"o{number:02d}"), arguments={"path": f"src/f{number}.py"})
        )
    return messages


def summaries_by_marker(request: RecordedRequest) -> Text:
    text = request.text()
    for number in range(50):
        if f"o{number:02d} " in text:
            return Text(f"I read src/f{number}.py.")
    return Text("I looked at something.")


@pytest.mark.parametrize(("after", "buffered"), [(19, 0), (20, 1)])
def test_a_group_enters_the_buffer_at_messages_old_threshold(after: int, buffered: int) -> None:
    chat = conversation(task_start(), groups(1), filler(after))
    assert len(strategy().buffered_groups(chat.messages)) == buffered


@pytest.mark.parametrize(("count", "fires"), [(9, False), (10, True)])
def test_trigger_counts_groups_not_messages(count: int, fires: bool) -> None:
    # the oldest group stays under 40 messages back, so only the count can fire
    chat = conversation(task_start(), groups(count), filler(20))
    assert len(strategy().buffered_groups(chat.messages)) == count
    assert strategy().should_run(chat, 0, 1000) is fires


@pytest.mark.parametrize(("after", "fires"), [(39, False), (40, True)])
def test_trigger_fires_when_the_oldest_group_is_max_distance_back(after: int, fires: bool) -> None:
    chat = conversation(task_start(), groups(1), filler(after))
    assert strategy().should_run(chat, 0, 1000) is fires


def test_excluded_tools_neither_buffer_nor_count() -> None:
    chat = conversation(
        task_start(), groups(9), group("ask_question", "yes", arguments={}), filler(20)
    )
    assert strategy().should_run(chat, 0, 1000) is False
    names = {g.tool_names for g in strategy().buffered_groups(chat.messages)}
    assert ("ask_question",) not in names


def test_an_empty_exclusion_list_summarizes_every_tool() -> None:
    chat = conversation(
        task_start(), groups(9), group("task_completion", "done", arguments={}), filler(20)
    )
    assert strategy(excluded_tools=[]).should_run(chat, 0, 1000) is True
    configured = strategy(excluded_tools=["read_file"]).buffered_groups(chat.messages)
    assert [g.tool_names for g in configured] == [("task_completion",)]


async def test_run_summarizes_each_group_in_place_in_order(llm_server: OpenAIServer) -> None:
    llm_server.responder = summaries_by_marker
    head = task_start()
    middle_user = user("please also check the docs")
    recent = filler(20)
    chat = conversation(head, groups(3), middle_user, groups(2), recent)
    events: list[ContextEvent] = []
    async with provider_for(llm_server) as provider:
        applied = await strategy().run(chat, provider, run_for(events))
    assert applied == 5
    assert len(llm_server.requests) == 5
    messages = chat.messages
    assert ids(messages[:2]) == ids(head)
    assert messages[5] is middle_user  # the user's message stayed where it was
    assert ids(messages[-20:]) == ids(recent)
    summaries = [m for m in messages if m.kind is MessageKind.SUMMARY]
    assert [s.role for s in summaries] == ["assistant"] * 5
    order = [int(s.content.split("src/f")[1][0]) for s in summaries]
    assert order == [0, 1, 2, 0, 1]  # markers restart in the second batch of groups
    first = summaries[0]
    assert "I read src/f0.py." in first.content
    assert "files read: src/f0.py" in Ledger.from_meta(first.meta["ledger"]).render()
    assert len(first.replaces) == 2
    assert first.meta["strategy"] == "tool_call" and first.meta["model"] == "main-model"
    assert first.meta["tokens_after"] < first.meta["tokens_before"]
    assert chat.is_valid()
    progress = [e for e in events if isinstance(e, SummarizationProgress)]
    assert [(p.done, p.total) for p in progress] == [(n, 5) for n in range(1, 6)]


async def test_summaries_run_concurrently_bounded_by_max_concurrent_summaries(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("I read a file.", delay=0.2)
    chat = conversation(task_start(), groups(8), filler(20))
    async with provider_for(llm_server) as provider:
        await strategy(max_concurrent_summaries=3).run(chat, provider, run_for([]))
    assert len(llm_server.requests) == 8
    assert 1 < llm_server.max_active <= 3


async def test_partial_failure_applies_successes_keeps_failures_verbatim(
    llm_server: OpenAIServer,
) -> None:
    def respond(request: RecordedRequest) -> Text | Fault:
        text = request.text()
        if "o01 " in text:  # fails last, but comes first in the conversation
            return Fault(500, {"error": {"message": "group one failed"}}, delay=0.3)
        if "o03 " in text:
            return Text("")  # an empty summary: this group fails, the model stays healthy
        return Text("I read a file.")

    llm_server.responder = respond
    original = groups(5)
    chat = conversation(task_start(), original, filler(20))
    events: list[ContextEvent] = []
    async with provider_for(llm_server) as provider:
        with pytest.raises(PartialSummarizationError) as caught:
            await strategy().run(chat, provider, run_for(events))
    error = caught.value
    assert (error.applied, error.failed) == (3, 2)
    assert isinstance(error.first_error, ServerError)
    assert "group one failed" in str(error.first_error)
    messages = chat.messages
    kept_ids = ids(messages)
    for failed in (1, 3):
        assert original[2 * failed].id in kept_ids and original[2 * failed + 1].id in kept_ids
    assert sum(1 for m in messages if m.kind is MessageKind.SUMMARY) == 3
    assert chat.is_valid()
    assert len([e for e in events if isinstance(e, SummarizationProgress)]) == 5


async def test_small_groups_need_no_call_and_leave_the_buffer(llm_server: OpenAIServer) -> None:
    chat = conversation(task_start(), group("read_file", "tiny"), filler(40))
    async with provider_for(llm_server) as provider:
        assert await strategy().run(chat, provider, run_for([])) == 1
    assert llm_server.requests == []
    assert chat[2].kind is MessageKind.SUMMARY and "tiny" in chat[2].content
    assert strategy().buffered_groups(chat.messages) == []


async def test_messages_appended_during_a_run_are_kept(llm_server: OpenAIServer) -> None:
    llm_server.responder = lambda request: Text("I read a file.", delay=0.1)
    chat = conversation(task_start(), groups(2), filler(20))
    late = user("a message that arrived meanwhile")
    async with provider_for(llm_server) as provider:
        task = asyncio.create_task(strategy().run(chat, provider, run_for([])))
        await asyncio.sleep(0.02)
        chat.append(late)
        assert await task == 2
    assert chat[-1] is late
    assert chat.is_valid()


async def test_parallel_tool_calls_in_one_message_are_one_group(llm_server: OpenAIServer) -> None:
    calls = (
        ToolCall("a", "read_file", '{"path": "x.py"}'),
        ToolCall("b", "read_file", '{"path": "y.py"}'),
    )
    parallel = [
        assistant("", calls),
        tool_result(calls[0], words(100)),
        tool_result(calls[1], words(100)),
    ]
    llm_server.responder = lambda request: Text("I read two files.")
    chat = conversation(task_start(), parallel, filler(40))
    assert len(strategy().buffered_groups(chat.messages)) == 1
    async with provider_for(llm_server) as provider:
        await strategy().run(chat, provider, run_for([]))
    assert len(llm_server.requests) == 1
    sent = llm_server.requests[0].text()
    assert "x.py" in sent and "y.py" in sent  # both calls and both results in one request
    summary = chat[2]
    assert summary.replaces == tuple(ids(parallel))
    assert 'read_file {"path": "x.py"}, read_file {"path": "y.py"}' in summary.content
    assert "files read: x.py, y.py" in Ledger.from_meta(summary.meta["ledger"]).render()
    assert chat.is_valid()


def test_parallel_calls_count_once_toward_the_trigger() -> None:
    calls = tuple(ToolCall(f"p{n}", "read_file", f'{{"path": "p{n}.py"}}') for n in range(3))
    parallel = [assistant("", calls), *(tool_result(call, words(100)) for call in calls)]
    chat = conversation(task_start(), groups(8), parallel, filler(20))
    assert len(strategy().buffered_groups(chat.messages)) == 9
    assert strategy().should_run(chat, 0, 1000) is False  # 9 groups, though 11 tool calls


async def test_parallel_calls_with_an_excluded_tool_are_kept_whole(
    llm_server: OpenAIServer,
) -> None:
    calls = (
        ToolCall("r", "read_file", '{"path": "notes.md"}'),
        ToolCall("q", "ask_question", '{"question": "Which branch?"}'),
    )
    mixed = [assistant("", calls), tool_result(calls[0], words(200)), tool_result(calls[1], "main")]
    llm_server.responder = lambda request: Text("I read a file.")
    chat = conversation(task_start(), mixed, groups(9), filler(20))
    assert strategy().should_run(chat, 0, 1000) is False
    async with provider_for(llm_server) as provider:
        assert await strategy().run(chat, provider, run_for([])) == 9
    assert ids(chat.messages[2:5]) == ids(mixed)
    assert all("Which branch?" not in r.text() for r in llm_server.requests)
    assert chat.is_valid()


async def test_summaries_are_applied_in_conversation_order_whatever_finishes_first(
    llm_server: OpenAIServer,
) -> None:
    def respond(request: RecordedRequest) -> Text:
        reply = summaries_by_marker(request)
        number = int(reply.text.split("src/f")[1][0])
        reply.delay = 0.05 * (4 - number)  # the last group's summary arrives first
        return reply

    llm_server.responder = respond
    original = groups(5)
    chat = conversation(task_start(), original, filler(20))
    replaced_order: list[str] = []

    class Recorder:
        def on_append(self, message: Message) -> None:
            pass

        def on_replace(self, removed: Sequence[Message], inserted: Sequence[Message]) -> None:
            replaced_order.append(removed[0].id)

    chat.add_observer(Recorder())
    events: list[ContextEvent] = []
    async with provider_for(llm_server) as provider:
        await strategy().run(chat, provider, run_for(events))
    finished = sorted(llm_server.requests, key=lambda r: r.finished_at or 0)
    # the server did answer out of order: all five were in flight at once, the last first
    assert "o04 " in finished[0].text() and "o00 " in finished[-1].text()
    assert replaced_order == [original[2 * n].id for n in range(5)]
    summaries = chat.messages[2:7]
    assert [s.content.split("\n")[1] for s in summaries] == [
        f"I read src/f{n}.py." for n in range(5)
    ]
    progress = [e for e in events if isinstance(e, SummarizationProgress)]
    assert [(p.done, p.total) for p in progress] == [(n, 5) for n in range(1, 6)]


async def test_a_huge_tool_output_is_map_reduced_into_one_summary(
    llm_server: OpenAIServer,
) -> None:
    def respond(request: RecordedRequest) -> Text:
        first_line = request.messages[-1]["content"].split("\n", 1)[0]
        if first_line.startswith(prompts.SYNTHESIS_TASK):
            return Text("I ran the full test suite: 3 failures in test_parser.py.")
        return Text("Part: some tests failed in test_parser.py.")

    llm_server.responder = respond
    log = "\n\n".join(f"test_{n} PASSED in test_parser.py line {n}." for n in range(1500))
    chosen = strategy()
    chosen.services.summarizer.single_call_limit = 2000
    huge = group("execute_command", log + "\n[exit code 1]", arguments={"command": "pytest"})
    chat = conversation(task_start(), huge, filler(40))
    async with provider_for(llm_server) as provider:
        assert await chosen.run(chat, provider, run_for([])) == 1
    tasks = [r.messages[-1]["content"].split("\n", 1)[0] for r in llm_server.requests]
    maps = [t for t in tasks if t.startswith(prompts.MAP_TASK.split("{")[0])]
    assert len(maps) >= 3 and tasks[-1] == prompts.SYNTHESIS_TASK
    summary = chat[2]
    assert summary.meta["level"] == "map_reduce"
    assert "3 failures in test_parser.py" in summary.content
    assert "`pytest` (exit 1)" in Ledger.from_meta(summary.meta["ledger"]).render()
    assert chat.is_valid()


async def test_a_failed_group_waits_for_new_messages_before_it_is_tried_again(
    llm_server: OpenAIServer,
) -> None:
    def respond(request: RecordedRequest) -> Text | Fault:
        if "o00 " in request.text():
            return Text("")  # this group's summary fails; the model itself works
        return Text("I read a file.")

    llm_server.responder = respond
    chosen = strategy()
    original = groups(10)
    chat = conversation(task_start(), original, filler(20))
    async with provider_for(llm_server) as provider:
        with pytest.raises(PartialSummarizationError):
            await chosen.run(chat, provider, run_for([]))
        assert len(llm_server.requests) == 10
        assert chosen.buffered_groups(chat.messages) == []  # no retry before the next call
        assert chosen.should_run(chat, 0, 1000) is False
        for message in filler(19):
            chat.append(message)
        assert chosen.buffered_groups(chat.messages) == []
        chat.append(user("and one more thing"))  # 20 messages since the failure
        retry = chosen.buffered_groups(chat.messages)
        assert [g.message_ids for g in retry] == [tuple(ids(original[:2]))]
        llm_server.responder = lambda request: Text("I read src/f0.py.")
        assert await chosen.run(chat, provider, run_for([])) == 1
    assert len(llm_server.requests) == 11
    assert chat.is_valid()


def test_exclusions_come_from_config_yaml(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("context:\n  excluded_tools: []\n", encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.error is None
    chosen = ToolCallSummarizationStrategy(services(loaded.settings.context))
    chat = conversation(task_start(), group("task_completion", words(200)), filler(40))
    assert chosen.should_run(chat, 0, 1000) is True
    path.write_text("context:\n  excluded_tools: [read_file]\n", encoding="utf-8")
    only_reads = ToolCallSummarizationStrategy(services(load_settings(path).settings.context))
    chat = conversation(task_start(), groups(1), filler(40))
    assert only_reads.should_run(chat, 0, 1000) is False
