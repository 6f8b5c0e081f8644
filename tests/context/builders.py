"""Small builders for context tests: conversations with tool-call groups, sized exactly for
`CharEstimateCounter` (4 characters per token, 3 tokens per message, 3 for reply priming)."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from forge.config.settings import ContextSettings
from forge.context.adaptive import AdaptiveSummarizer
from forge.context.conversation import Conversation
from forge.context.events import ContextEvent, Trigger
from forge.context.manager import Manager
from forge.context.strategies import StrategyRun, StrategyServices
from forge.llm.messages import Message, ToolCall, assistant, system, tool_result, user
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.tokenizer import CharEstimateCounter
from tests.support.openai_server import OpenAIServer

MAIN_MODEL = "main-model"
API_KEY = "sk-test-secret-key-123"

_call_ids = itertools.count(1)


def words(tokens: int, marker: str = "word") -> str:
    """Text of exactly `tokens` tokens for CharEstimateCounter: sentences of 4-char words."""
    base = (marker[:3] + " ") if len(marker) >= 3 else "abc "
    text = (base * tokens)[: tokens * 4]
    return text


def group(
    name: str = "read_file",
    output: str = "",
    *,
    arguments: dict[str, Any] | None = None,
    text: str = "",
) -> list[Message]:
    """One tool-call group: the assistant call and its result."""
    call = ToolCall(
        id=f"call_{next(_call_ids)}",
        name=name,
        arguments=json.dumps(arguments if arguments is not None else {"path": "src/main.py"}),
    )
    return [assistant(text, (call,)), tool_result(call, output or words(150, "out"))]


def filler(count: int, text: str = "noted") -> list[Message]:
    """`count` plain assistant messages."""
    return [assistant(f"{text} {number}") for number in range(count)]


def conversation(*parts: Message | Iterable[Message]) -> Conversation:
    """A conversation of these messages (lists are flattened)."""
    messages: list[Message] = []
    for part in parts:
        if isinstance(part, Message):
            messages.append(part)
        else:
            messages.extend(part)
    return Conversation(messages)


def task_start(task: str = "Fix the failing test in src/main.py") -> list[Message]:
    """The usual head: a system prompt and the pending task."""
    return [system("You are Forge, a coding agent."), user(task)]


def counter() -> CharEstimateCounter:
    """The exact test counter."""
    return CharEstimateCounter(4)


@asynccontextmanager
async def provider_for(
    server: OpenAIServer, model: str = MAIN_MODEL
) -> AsyncIterator[OpenAICompatibleProvider]:
    """A real provider talking to the loopback server, without retries."""
    provider = OpenAICompatibleProvider(model, server.base_url, API_KEY, max_retries=0)
    try:
        yield provider
    finally:
        await provider.aclose()


def llm_tiers(**changes: Any) -> ContextSettings:
    """Settings with the LLM tiers alone: tool-call summaries on, observation masking and the
    ingest cap off (the tests of the LLM strategies, which those would otherwise pre-empt)."""
    values: dict[str, Any] = {
        "tool_call_summaries": True,
        "observation_masking": False,
        "ingest_max_share": 1.0,
    }
    values.update(changes)
    return ContextSettings(**values)


def make_manager(
    provider: OpenAICompatibleProvider,
    settings: ContextSettings | None = None,
    *,
    events: list[ContextEvent] | None = None,
    **options: Any,
) -> Manager:
    """A manager with the exact counter and a large window unless told otherwise; without
    `settings`, the LLM tiers alone (`llm_tiers`)."""
    if events is not None:
        options["emit"] = events.append
    options.setdefault("context_window", 1_000_000)
    return Manager(settings or llm_tiers(), provider, counter(), **options)


def ids(messages: Sequence[Message]) -> list[str]:
    """Message ids in order."""
    return [message.id for message in messages]


def services(settings: ContextSettings | None = None, **options: Any) -> StrategyServices:
    """Strategy services with the exact counter."""
    chosen = settings or ContextSettings()
    exact = counter()
    return StrategyServices(chosen, exact, AdaptiveSummarizer(exact, chosen.summarizer), **options)


def run_for(events: list[ContextEvent], **options: Any) -> StrategyRun:
    """A strategy run whose events land in `events`."""
    return StrategyRun("run-1", Trigger.AUTO, events.append, **options)
