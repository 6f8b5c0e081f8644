"""What the manager leaves behind: summary files, logs naming models (never keys), and the
one strategy contract for strategies written elsewhere."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from forge.context.conversation import Conversation
from forge.context.events import ContextEvent, SummarizationCompleted, SummarizationStarted
from forge.context.strategies import Capabilities, ContextStrategy, StrategyRun
from forge.context.summary_archive import read_summary_file
from forge.llm.messages import Message, MessageKind, assistant
from forge.llm.protocols import Provider
from tests.context.builders import (
    API_KEY,
    conversation,
    filler,
    group,
    make_manager,
    provider_for,
    task_start,
    words,
)
from tests.support.openai_server import OpenAIServer, Text


def old_groups(count: int) -> list[Message]:
    messages: list[Message] = []
    for number in range(count):
        messages.extend(group("read_file", words(150), arguments={"path": f"lib/m{number}.py"}))
    return [*task_start(), *messages, *filler(20)]


async def test_each_summary_is_written_as_markdown_with_front_matter(
    llm_server: OpenAIServer, tmp_path: Path
) -> None:
    llm_server.responder = lambda request: Text("I read the module.")
    directory = tmp_path / "session-1" / "summaries"
    chat = conversation(old_groups(10))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, summary_dir=directory, summarization_model="cheap")
        await manager.evaluate_and_summarize(chat)
    files = sorted(directory.glob("*.md"))
    assert len(files) == 10
    summaries = {m.id: m for m in chat.messages if m.kind is MessageKind.SUMMARY}
    for path in files:
        header, body = read_summary_file(path)
        assert header["strategy"] == "tool_call"
        assert header["model"] == "cheap"
        assert header["trigger"] == "auto"
        assert header["tokens_in"] > header["tokens_out"] > 0
        assert header["compression_ratio"] == round(header["tokens_in"] / header["tokens_out"], 3)
        assert header["created"].endswith("+00:00")
        message = summaries[header["message_id"]]
        assert header["replaced_ids"] == list(message.replaces)
        assert "I read the module." in body and "(recall " in body
    assert oct(directory.stat().st_mode & 0o777) == "0o700"


async def test_logs_name_the_model_of_each_run_and_never_the_key(
    llm_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    llm_server.responder = lambda request: Text("noted")
    caplog.set_level(logging.DEBUG, logger="forge")
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, summarization_model="summary-mini")
        await manager.evaluate_and_summarize(conversation(old_groups(10)))
    runs = [r.getMessage() for r in caplog.records if "uses model" in r.getMessage()]
    assert runs and all("summary-mini" in line for line in runs)
    assert "tool_call" in runs[0]
    assert API_KEY not in caplog.text


class CountingWordsStrategy(ContextStrategy):
    """A strategy written outside forge.context: drops filler, answering via the provider."""

    name = "external"
    capabilities = Capabilities(uses_llm=True)

    def __init__(self) -> None:
        self.models: list[str] = []

    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        return any(m.content.startswith("noted") for m in conversation.messages)

    def pending_items(
        self, conversation: Conversation, max_tokens: int, *, force: bool = False
    ) -> int:
        return sum(1 for m in conversation.messages if m.content.startswith("noted"))

    async def run(
        self, conversation: Conversation, provider: Provider | None, run: StrategyRun
    ) -> int:
        assert provider is not None  # uses_llm: the runner gives the summarization provider
        self.models.append(provider.model)
        completion = await provider.complete([assistant("say ok")])
        removed = 0
        for index in range(len(conversation) - 1, -1, -1):
            if conversation[index].content.startswith("noted"):
                conversation.replace_message(index, assistant(completion.message.content, ()))
                removed += 1
        return removed


async def test_any_strategy_keeping_the_contract_can_be_composed(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("ok")
    external = CountingWordsStrategy()
    events: list[ContextEvent] = []
    chat = conversation(task_start(), filler(3))
    async with provider_for(llm_server) as provider:
        manager = make_manager(
            provider, events=events, strategies=[external], summarization_model="s-model"
        )
        await manager.evaluate_and_summarize(chat)
    assert external.models == ["s-model"]
    started = [e for e in events if isinstance(e, SummarizationStarted)]
    completed = [e for e in events if isinstance(e, SummarizationCompleted)]
    assert [(e.strategy, e.model) for e in started] == [("external", "s-model")]
    assert completed[0].items == 3 and completed[0].llm_calls == 1


async def test_threshold_summaries_are_written_too(
    llm_server: OpenAIServer, tmp_path: Path
) -> None:
    llm_server.responder = lambda request: Text("I read every module; nothing to change.")
    directory = tmp_path / "summaries"
    chat = conversation(old_groups(6))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, summary_dir=directory)
        await manager.compact(chat, "mention the modules")
    [path] = sorted(directory.glob("*-threshold-*.md"))
    header, body = read_summary_file(path)
    assert (header["strategy"], header["trigger"], header["model"]) == (
        "threshold",
        "manual",
        "main-model",
    )
    summary = next(m for m in chat.messages if m.kind is MessageKind.SUMMARY)
    assert header["message_id"] == summary.id
    assert header["replaced_ids"] == list(summary.replaces) and len(summary.replaces) > 2
    assert header["tokens_in"] > header["tokens_out"] > 0
    assert "nothing to change" in body and "(recall " in body
