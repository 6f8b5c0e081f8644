"""The incremental bookkeeping (`forge.context.tally`): always equal to a full recount, and the
check before every LLM call counts only the messages added since the last one."""

from __future__ import annotations

import random

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.groups import tool_call_groups, user_turns
from forge.context.manager import Manager
from forge.context.strategies import ToolCallSummarizationStrategy
from forge.context.tally import Tallies
from forge.llm.messages import Message, MessageKind, assistant, user
from forge.llm.tokenizer import TiktokenCounter
from tests.context.builders import (
    conversation,
    counter,
    group,
    provider_for,
    services,
    task_start,
    words,
)
from tests.support.openai_server import OpenAIServer


def random_part(rng: random.Random) -> list[Message]:
    roll = rng.random()
    if roll < 0.4:
        name = rng.choice(["read_file", "execute_command", "task_completion"])
        return group(name, words(rng.randint(1, 60), "out"))
    if roll < 0.7:
        return [assistant(words(rng.randint(1, 40), "say"))]
    return [user(words(rng.randint(1, 20), "ask"))]


def test_the_tally_always_equals_a_full_recount() -> None:
    rng = random.Random(7)
    exact = counter()
    tallies = Tallies(exact)
    strategy = ToolCallSummarizationStrategy(
        services(ContextSettings(messages_old_threshold=5), tallies=tallies)
    )
    chat = conversation(task_start())
    tally = tallies.of(chat)
    for step in range(400):
        for message in random_part(rng):
            chat.append(message)
        if step % 37 == 36 and len(chat) > 10:  # a summary replaces a stretch in place
            start = rng.randint(2, len(chat) - 5)
            groups = [g for g in tool_call_groups(chat.messages) if g.start >= start]
            if groups:
                first = groups[0]
                summary = Message(role="assistant", content="summary", kind=MessageKind.SUMMARY)
                chat.replace_range(first.start, first.end, [summary])
        if step % 5 == 0:
            messages = chat.messages
            assert tally.tokens == exact.count_messages(messages)
            assert tally.non_system == sum(m.role != "system" for m in messages)
            assert tally.groups() == tool_call_groups(messages)
            assert tally.user_positions() == [t.start for t in user_turns(messages)]
            buffered = strategy.buffered_groups(messages)
            count, oldest = strategy.buffer_state(chat)
            assert count == len(buffered)
            assert oldest == (buffered[0] if buffered else None)


async def test_the_check_before_a_call_counts_only_the_new_messages(
    llm_server: OpenAIServer,
) -> None:
    tokenizer = TiktokenCounter("gpt-4o")
    messages: list[Message] = list(task_start())
    for number in range(2_500):
        messages.append(assistant(f"step {number}: looked at the code"))
        messages.append(user(f"fine, continue with {number + 1}"))
    chat = Conversation(messages)
    async with provider_for(llm_server) as provider:
        manager = Manager(ContextSettings(), provider, tokenizer, context_window=10_000_000)
        await manager.evaluate_and_summarize(chat)  # the first sight counts everything once
        for number in range(5):
            chat.append(assistant(f"new step {number}"))
            chat.append(user("go on"))
            before = tokenizer.cache_hits + tokenizer.cache_misses
            await manager.evaluate_and_summarize(chat)
            # the two new messages, each looked up at most twice (the tally, a tier)
            assert tokenizer.cache_hits + tokenizer.cache_misses - before <= 4
    assert llm_server.requests == []
