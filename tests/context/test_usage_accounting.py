"""Usage accounting against the loopback server: after a compaction the reported prompt size
never falls below Forge's own count of what remains, whichever way the server's tokenizer
differs from Forge's; a reported 0 leaves Forge on its own count; tool definitions count."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.events import ContextEvent, ContextUsage, SummarizationCompleted
from forge.context.manager import Manager
from forge.llm.messages import Message, assistant, user
from tests.agent.loop_harness import make_provider, with_manager
from tests.context.builders import (
    conversation,
    counter,
    llm_tiers,
    make_manager,
    provider_for,
    task_start,
    words,
)
from tests.support.openai_server import OpenAIServer, Text


def work(count: int) -> list[Message]:
    messages: list[Message] = []
    for number in range(count):
        messages.append(user(f"part {number}: go on"))
        messages.append(assistant(f"done with part {number}: " + words(600, f"w{number:02d}")))
    return messages


def local_prompt(manager: Manager, chat: Conversation) -> int:
    return manager.counter.count_messages(chat.messages) + manager.tool_tokens


async def sent_and_reported(
    manager: Manager, chat: Conversation, server: OpenAIServer, reported: int
) -> None:
    """One agent call as the loop makes it: check, send, record the usage, append the reply."""
    await manager.evaluate_and_summarize(chat)
    async with provider_for(server) as provider:
        server.enqueue(Text("Next I will refactor.", prompt_tokens=reported))
        completion = await provider.complete(chat.messages)
    if completion.usage is not None:  # the provider drops a reported 0 (issue "Real servers")
        manager.record_usage(completion.usage.prompt_tokens, chat)
    chat.append(completion.message)


@pytest.mark.parametrize("server_ratio", [0.25, 2.0], ids=["server-counts-fewer", "more"])
async def test_after_a_compaction_usage_never_falls_below_the_local_count(
    llm_server: OpenAIServer, server_ratio: float
) -> None:
    llm_server.responder = lambda request: Text("I did every part; all done.")
    events: list[ContextEvent] = []
    chat = conversation(task_start(), work(12), user("and now the tests"))
    async with provider_for(llm_server) as provider:
        settings = llm_tiers(max_tokens=40_000, goal_batch_age=1000)  # compact() alone acts
        manager = make_manager(provider, settings, events=events)
        local_sent = local_prompt(manager, chat)
        reported = round(local_sent * server_ratio)
        await sent_and_reported(manager, chat, llm_server, reported)
        # only appended since the report: exact plus what was added, never below Forge's count
        assert manager.current_tokens(chat) == max(
            local_prompt(manager, chat), reported + (local_prompt(manager, chat) - local_sent)
        )
        before = manager.current_tokens(chat)
        await manager.compact(chat)
        local_after = local_prompt(manager, chat)
        assert manager.current_tokens(chat) < before  # a compaction never looks like growth
        assert local_after < local_sent / 2
        scaled = round(local_after * reported / local_sent)
        expected = max(local_after, scaled)
        assert manager.current_tokens(chat) == expected
        completed = [e for e in events if isinstance(e, SummarizationCompleted)]
        assert completed and completed[-1].tokens_after == expected
        usage = [e for e in events if isinstance(e, ContextUsage)]
        assert usage[-1].current_tokens == expected
        if server_ratio < 1:
            assert expected == local_after  # the floor: never "51.6k -> 0 tokens"
        else:
            assert expected == scaled > local_after


async def test_a_reported_zero_leaves_forge_on_its_own_count(llm_server: OpenAIServer) -> None:
    chat = conversation(task_start(), work(3))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider)
        await sent_and_reported(manager, chat, llm_server, 0)
        assert manager.current_tokens(chat) == local_prompt(manager, chat)
        manager.record_usage(0, chat)  # and the manager, told 0 directly, ignores it too
        assert manager.current_tokens(chat) == local_prompt(manager, chat)
        manager.record_usage(None, chat)  # type: ignore[arg-type]  # no usage at all
        assert manager.current_tokens(chat) == local_prompt(manager, chat)


async def test_tool_definitions_are_counted_in_the_prompt(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("Hello! Nothing to do."))
    provider = make_provider(llm_server)
    try:
        exact = counter()
        agent, manager = with_manager(
            provider,
            workspace,
            lambda emit: Manager(
                ContextSettings(), provider, exact, context_window=100_000, emit=emit
            ),
        )
        seen = [event async for event in agent.run_turn("hello")]
    finally:
        await provider.aclose()
    tools = exact.count_tools(agent.registry.specs())
    assert tools > 500 and manager.tool_tokens == tools
    first_usage = next(e for e in seen if isinstance(e, ContextUsage))
    sent = agent.conversation.messages[:2]  # the system prompt and "hello"
    assert first_usage.current_tokens == exact.count_messages(sent) + tools
