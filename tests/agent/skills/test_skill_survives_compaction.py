"""A skill loaded by the `skill` tool survives every way the context shrinks: it is in the
default `context.excluded_tools`, so masking, the tool-call, threshold and goal-batch
summaries (against the loopback server) and the fallback ladder leave its call and body."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.fallback import apply_fallback_ladder
from forge.context.strategies import (
    GoalBatchCompactionStrategy,
    ThresholdSummarizationStrategy,
    ToolCallSummarizationStrategy,
)
from forge.context.strategies.masking import ObservationMaskingStrategy
from forge.llm.messages import Message, assistant, user
from tests.context.builders import (
    conversation,
    counter,
    filler,
    group,
    provider_for,
    run_for,
    services,
    task_start,
    words,
)
from tests.support.openai_server import OpenAIServer, Text

BODY = '<skill name="deploy" folder="/skills/deploy">\nDeploy with care. ' + words(300, "dep")


def skill_group() -> list[Message]:
    return group("skill", BODY, arguments={"name": "deploy"})


def turn(number: int) -> list[Message]:
    return [
        user(f"request {number}: " + words(30, "req")),
        *group("read_file", words(300, f"r{number:02d}"), arguments={"path": f"f{number}.py"}),
        *group("execute_command", words(300, f"c{number:02d}"), arguments={"command": "make"}),
        assistant(f"done {number}"),
    ]


def chat() -> Conversation:
    messages = [*task_start(), *skill_group(), assistant("loaded")]
    for number in range(1, 9):
        messages.extend(turn(number))
    messages.extend([user("the current request"), *filler(24)])
    return conversation(messages)


def body_kept(chat: Conversation) -> bool:
    return any(message.content == BODY and message.role == "tool" for message in chat.messages)


Runner = Callable[[Conversation, OpenAIServer], Awaitable[None]]


async def _llm(chat: Conversation, server: OpenAIServer, strategy: object) -> None:
    async with provider_for(server) as provider:
        await strategy.run(chat, provider, run_for([]))  # type: ignore[attr-defined]


async def threshold(chat: Conversation, server: OpenAIServer) -> None:
    await _llm(chat, server, ThresholdSummarizationStrategy(services(ContextSettings())))


async def tool_call(chat: Conversation, server: OpenAIServer) -> None:
    settings = ContextSettings(tool_call_summaries=True)
    await _llm(chat, server, ToolCallSummarizationStrategy(services(settings)))


async def goal_batch(chat: Conversation, server: OpenAIServer) -> None:
    await _llm(chat, server, GoalBatchCompactionStrategy(services(ContextSettings())))


async def masking(chat: Conversation, server: OpenAIServer) -> None:
    strategy = ObservationMaskingStrategy(ContextSettings(), counter())
    assert strategy.pending_items(chat, 1000, force=True) > 0
    await strategy.run(chat, None, run_for([]))


async def fallback(chat: Conversation, server: OpenAIServer) -> None:
    result = apply_fallback_ladder(
        chat,
        counter(),
        target_tokens=500,
        excluded_tools=ContextSettings().excluded_tools,
        keep_recent=2,
    )
    assert result is not None


@pytest.mark.parametrize("shrink", [threshold, tool_call, goal_batch, masking, fallback])
async def test_the_loaded_skill_survives(llm_server: OpenAIServer, shrink: Runner) -> None:
    llm_server.responder = lambda request: Text("I ran make and read files; all passed.")
    conversation_ = chat()
    before = counter().count_messages(conversation_.messages)
    await shrink(conversation_, llm_server)
    assert counter().count_messages(conversation_.messages) < before  # it did shrink
    assert body_kept(conversation_)
    assert conversation_.is_valid()


def test_skill_is_an_excluded_tool_by_default() -> None:
    assert "skill" in ContextSettings().excluded_tools
