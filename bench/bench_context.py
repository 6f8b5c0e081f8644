"""Context management over a real agent trajectory, against the loopback OpenAI-compatible server.

Scenarios over the OpenHands ponyc-4593 session (69 messages, 33 tool calls):
- replay: the messages arrive one by one and the manager runs before every assistant message,
  as it does before each LLM call; the session outgrows the thresholds of each budget, so the
  strategies fire. Tokens are counted with the gpt-4o tokenizer. "tokens
  before" is the unmanaged prompt, "tokens after" what the manager kept; the ratio is after
  over before.
- tool-call summarization of the session's old groups, one at a time (baseline) against
  `max_concurrent_summaries` at once, with `LATENCY` seconds of server latency per request;
  the ratio is wall time over the sequential baseline.
"""

from __future__ import annotations

import asyncio
import time

from bench import BenchmarkSkipped
from bench.corpus import TRAJECTORY, load_trajectory
from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.events import (
    ContextEvent,
    SummarizationCompleted,
    SummarizationStarted,
    Trigger,
)
from forge.context.manager import Manager
from forge.context.strategies import StrategyRun, ToolCallSummarizationStrategy
from forge.llm.messages import Message
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.tokenizer import TiktokenCounter
from tests.support.openai_server import OpenAIServer, RecordedRequest, Text

MODEL = "gpt-4o"
BUDGETS = (12_000, 16_000)
"""Prompt budgets for the replay: the session (15k tokens) crosses the thresholds of both."""
LATENCY = 0.1
"""Seconds the server waits before each summary (a fast hosted model's time to first token)."""

HEADER = ("case", "messages", "tokens before", "tokens after", "LLM calls", "seconds", "ratio")


def _summary_reply(request: RecordedRequest) -> Text:
    """A plausible summary: about a tenth of the material, at most 120 words."""
    material = request.messages[-1]["content"]
    words = material.split()
    return Text(" ".join(words[: max(12, min(120, len(words) // 10))]), delay=LATENCY)


async def _replay(server: OpenAIServer, messages: list[Message], budget: int) -> tuple[str, ...]:
    counter = TiktokenCounter(MODEL)
    events: list[ContextEvent] = []
    provider = OpenAICompatibleProvider(MODEL, server.base_url, "bench-key", max_retries=0)
    settings = ContextSettings(max_tokens=budget)
    manager = Manager(settings, provider, counter, context_window=128_000, event_sink=events.append)
    conversation = Conversation()
    started = time.perf_counter()
    try:
        for message in messages:
            if message.role == "assistant":
                await manager.evaluate_and_summarize(conversation)
                if conversation.problems():  # what would be sent must be valid
                    raise RuntimeError(f"invalid prompt: {conversation.problems()}")
            conversation.append(message)
    finally:
        await provider.aclose()
    seconds = time.perf_counter() - started
    before = counter.count_messages(messages)
    after = manager.current_tokens(conversation)
    calls = sum(e.llm_calls for e in events if isinstance(e, SummarizationCompleted))
    runs = sorted({e.strategy for e in events if isinstance(e, SummarizationStarted)})
    return (
        f"replay, budget {budget:,} ({', '.join(runs)})",
        str(len(messages)),
        f"{before:,}",
        f"{after:,}",
        str(calls),
        f"{seconds:.3f}",
        f"{after / before:.3f}",
    )


async def _tool_calls(
    server: OpenAIServer, messages: list[Message], concurrency: int
) -> tuple[int, int, int, float]:
    counter = TiktokenCounter(MODEL)
    settings = ContextSettings(max_concurrent_summaries=concurrency)
    provider = OpenAICompatibleProvider(MODEL, server.base_url, "bench-key", max_retries=0)
    manager = Manager(settings, provider, counter, context_window=128_000)
    strategy = next(s for s in manager.strategies if isinstance(s, ToolCallSummarizationStrategy))
    conversation = Conversation(messages)
    before = counter.count_messages(conversation.messages)
    server.requests.clear()
    started = time.perf_counter()
    try:
        await strategy.run(conversation, provider, StrategyRun("bench", Trigger.AUTO, _ignore))
    finally:
        await provider.aclose()
    seconds = time.perf_counter() - started
    return before, counter.count_messages(conversation.messages), len(server.requests), seconds


def _ignore(event: ContextEvent) -> None:
    """Events are not measured here."""


def run() -> list[tuple[str, ...]]:
    """Measure the scenarios; raises BenchmarkSkipped if the corpus is not beside the repo."""
    if not TRAJECTORY.is_file():
        raise BenchmarkSkipped(f"trajectory not found at {TRAJECTORY}")
    messages = load_trajectory(TRAJECTORY)
    server = OpenAIServer().start()
    server.responder = _summary_reply
    try:
        rows = [asyncio.run(_replay(server, messages, budget)) for budget in BUDGETS]
        sequential = asyncio.run(_tool_calls(server, messages, 1))
        parallel = asyncio.run(_tool_calls(server, messages, 5))
    finally:
        server.stop()
    for label, (before, after, calls, seconds) in (
        ("tool-call groups, sequential (baseline)", sequential),
        ("tool-call groups, 5 concurrent", parallel),
    ):
        rows.append(
            (
                f"{label}, {LATENCY}s latency",
                str(len(messages)),
                f"{before:,}",
                f"{after:,}",
                str(calls),
                f"{seconds:.3f}",
                f"{seconds / sequential[3]:.3f}",
            )
        )
    return rows
