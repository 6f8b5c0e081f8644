"""One limiter for every summary request, map-reduce steps included: twelve 100 KB tool outputs
on a summarizer with an 8k window never put more than `max_concurrent_summaries` requests in
flight at the loopback server."""

from __future__ import annotations

from forge.context.events import ContextEvent, SummarizationCompleted
from forge.llm.messages import Message, MessageKind
from tests.context.builders import (
    conversation,
    filler,
    group,
    llm_tiers,
    make_manager,
    provider_for,
    task_start,
    words,
)
from tests.support.openai_server import OpenAIServer, Text


def huge_outputs(count: int) -> list[Message]:
    messages: list[Message] = []
    for number in range(count):
        output = words(25_000, f"h{number:02d}")  # 100 KB: about a dozen chunks each
        messages.extend(group("read_file", output, arguments={"path": f"data/{number}.csv"}))
    return messages


async def test_the_server_never_sees_more_than_max_concurrent_summaries_in_flight(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text(
        "Part of the data file: rows of numbers.", delay=0.02
    )
    events: list[ContextEvent] = []
    settings = llm_tiers(max_concurrent_summaries=5)
    assert settings.summarizer.max_concurrent == 5  # each document alone could take all five
    chat = conversation(task_start(), huge_outputs(12), filler(20))
    async with provider_for(llm_server) as provider:
        manager = make_manager(
            provider, settings, events=events, summarizer_window=8192, summarization_model="s"
        )
        await manager.evaluate_and_summarize(chat)
    requests = len(llm_server.requests)
    assert requests > 12 * 5  # map-reduce: many requests per document
    assert 1 < llm_server.max_active <= 5
    completed = [e for e in events if isinstance(e, SummarizationCompleted)]
    assert completed[0].strategy == "tool_call" and completed[0].items == 12
    assert sum(1 for m in chat.messages if m.kind is MessageKind.SUMMARY) == 12
    assert chat.is_valid()
