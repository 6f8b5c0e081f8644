"""Prompt caching on the Anthropic provider, end to end: a real runtime (agent, context manager,
tools, session file) against the loopback Messages API server (docs/adr/0037).

Each request carries at most 4 breakpoints — the last tool, the system prompt, the user message
three from the end and the newest message — and repeats the previous request byte for byte up to
the previous request's last breakpoint, within a session, across turns, and after `--continue`.
"""

from __future__ import annotations

import itertools
import json
from datetime import date, datetime, timedelta
from pathlib import Path

from pydantic import SecretStr

from forge.agent.system_prompt import build_system_prompt, session_date
from forge.config.prices import ModelPriceSettings
from forge.config.settings import ContextSettings, LLMSettings, Settings
from forge.llm.anthropic_cache import message_breakpoints, with_breakpoints
from forge.llm.anthropic_wire import MessagesRequest
from forge.session.build import SessionOptions, build_session
from forge.session.core import Session
from tests.agent.loop_harness import drive, finished
from tests.support.anthropic_server import (
    Answer,
    AnthropicServer,
    MessagesRequestRecord,
    Reply,
    Use,
)

KEY = "sk-ant-test-caching-0123456789"
MODEL = "claude-sonnet-4-6"


def settings_for(
    server: AnthropicServer, prices: dict[str, ModelPriceSettings] | None = None, **context: object
) -> Settings:
    llm = LLMSettings(
        provider="anthropic",
        model=MODEL,
        base_url=server.base_url,
        api_key=SecretStr(KEY),
        max_retries=0,
    )
    return Settings(llm=llm, context=ContextSettings.model_validate(context), prices=prices or {})


FLAT_CACHE_PRICES = {MODEL: ModelPriceSettings(input=3.0, cached_input=3.0, output=15.0)}
"""Prices under which a cache read costs what a write does: masking then has nothing to wait
for (docs/adr/0038 §8) and batches as `mask_batch` says."""


def steps(count: int) -> object:
    """A responder: `count` tool calls (one per request, listing files), then
    `task_completion`; a request without tools (a summary) gets a summary."""

    def respond(request: MessagesRequestRecord) -> Reply:
        if not request.tools:
            return Answer("Summary of the work so far.")
        results = sum(
            1 for entry in request.blocks() if entry.get("block", {}).get("type") == "tool_result"
        )
        results_this_turn = results - respond.results_before  # type: ignore[attr-defined]
        if results_this_turn < count:
            return Answer(f"Step {results_this_turn + 1}.", calls=[Use("list_files", {})])
        return Answer("", calls=[Use("task_completion", {"result": "done"})])

    respond.results_before = 0  # type: ignore[attr-defined]
    return respond


def chat_requests(server: AnthropicServer) -> list[MessagesRequestRecord]:
    return [request for request in server.requests if request.tools]


def assert_breakpoints_in_place(request: MessagesRequestRecord) -> None:
    blocks = request.blocks()
    marks = request.breakpoints()
    assert 1 <= len(marks) <= 4
    tools = len(request.tools)
    expected = [tools - 1, tools + len(request.system) - 1]
    last_block_of = {}
    for index, entry in enumerate(blocks):
        if "message" in entry:
            last_block_of[entry["message"]] = index
    expected += [last_block_of[number] for number in message_breakpoints(len(request.messages))]
    assert marks == expected
    for number in message_breakpoints(len(request.messages)):
        assert request.messages[number]["role"] == "user"


def assert_prefix_repeated(earlier: MessagesRequestRecord, later: MessagesRequestRecord) -> None:
    """`later` repeats `earlier` byte for byte up to `earlier`'s last breakpoint."""
    upto = max(earlier.breakpoints())
    assert later.prefix_bytes(upto) == earlier.prefix_bytes(upto)


async def run_turn(session: Session, text: str) -> None:
    events = await drive(session.agent.run_turn(text))
    assert finished(events).reason == "completed", finished(events)


def test_the_placement_is_tools_system_and_the_two_newest_user_messages() -> None:
    request = MessagesRequest(
        tools=[{"name": "a"}, {"name": "b"}],
        system=[{"type": "text", "text": "sys"}],
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "q"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "1"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1"}]},
            {
                "role": "assistant",
                "content": [{"type": "thinking", "signature": "s"}, {"type": "tool_use"}],
            },
            {"role": "user", "content": [{"type": "tool_result"}, {"type": "text", "text": "x"}]},
        ],
    )
    placed = with_breakpoints(request, "1h")
    marker = {"type": "ephemeral", "ttl": "1h"}
    assert "cache_control" not in placed.tools[0] and placed.tools[1]["cache_control"] == marker
    assert placed.system[0]["cache_control"] == marker
    marked = [
        (number, index)
        for number, message in enumerate(placed.messages)
        for index, block in enumerate(message["content"])
        if "cache_control" in block
    ]
    assert marked == [(2, 0), (4, 1)]
    assert "cache_control" not in request.tools[1]  # the input is left as it was
    assert message_breakpoints(1) == (0,) and message_breakpoints(2) == (1,)
    assert message_breakpoints(0) == ()


async def test_each_request_rereads_the_previous_one_across_turns_and_after_continue(
    anthropic_server: AnthropicServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    responder = steps(3)
    anthropic_server.responder = responder  # type: ignore[assignment]
    first = build_session(settings_for(anthropic_server), workspace)
    try:
        await run_turn(first, "look around")
        responder.results_before = 4  # type: ignore[attr-defined]
        await run_turn(first, "look again")
    finally:
        await first.aclose()
    before_resume = len(chat_requests(anthropic_server))

    resumed = build_session(
        settings_for(anthropic_server), workspace, SessionOptions(resume_latest=True)
    )
    try:
        assert resumed.session_id == first.session_id
        responder.results_before = 8  # type: ignore[attr-defined]
        await run_turn(resumed, "and once more")
    finally:
        await resumed.aclose()

    requests = chat_requests(anthropic_server)
    assert len(requests) == before_resume + 4 and before_resume == 8
    for request in requests:
        assert_breakpoints_in_place(request)
    for earlier, later in itertools.pairwise(requests):
        assert_prefix_repeated(earlier, later)
    # The server's cache saw it: every request after the first read the previous prefix.
    usage = anthropic_server.usage_log
    assert usage[0]["cache_read_input_tokens"] == 0
    for previous, current in itertools.pairwise(usage):
        previous_prompt = (
            previous["cache_read_input_tokens"] + (previous["cache_creation_input_tokens"])
        )
        assert current["cache_read_input_tokens"] == previous_prompt
    # Nearly the whole prompt is read from the cache from the second request on.
    total = sum(u["input_tokens"] + u["cache_read_input_tokens"] for u in usage)
    total += sum(u["cache_creation_input_tokens"] for u in usage)
    read = sum(u["cache_read_input_tokens"] for u in usage)
    assert read / total > 0.8


async def test_a_resumed_session_keeps_the_date_it_started_on_in_the_system_prompt(
    anthropic_server: AnthropicServer, workspace: Path
) -> None:
    """The date is the only part of the system prompt that changes by itself; a session resumed
    on another day states the day it started, so the prompt stays the same bytes."""
    first = build_session(settings_for(anthropic_server), workspace)
    try:
        await drive(first.agent.run_turn("hi"))
    finally:
        await first.aclose()
    path = first.store.path_for(first.session_id)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    ten_days_ago = datetime.now() - timedelta(days=10)
    header["created"] = ten_days_ago.timestamp()
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")

    resumed = build_session(
        settings_for(anthropic_server), workspace, SessionOptions(resume_latest=True)
    )
    try:
        await drive(resumed.agent.run_turn("hello again"))
    finally:
        await resumed.aclose()
    prompt = anthropic_server.requests[-1].system[0]["text"]
    assert f"Today: {ten_days_ago.date().isoformat()}" in prompt
    assert prompt == build_system_prompt(
        resumed.workspace, resumed.registry.specs(), today=ten_days_ago.date()
    )
    assert session_date({"created": "garbage"}) == date.today()


async def test_a_masking_batch_invalidates_the_cache_once_not_every_turn(
    anthropic_server: AnthropicServer, workspace: Path
) -> None:
    """Masking waits for a batch of outputs and masks them at once: the prefix changes on the
    request after each batch and nowhere else, so each batch costs one re-write."""
    from forge.context.events import SummarizationCompleted

    # Ten different files: a re-read of the same file would be masked at once as superseded
    # (ADR 0038), which is not what this test is about.
    for number in range(10):
        (workspace / f"big{number}.txt").write_text(f"line {number} of text to read back\n" * 40)

    def respond(request: MessagesRequestRecord) -> Reply:
        results = sum(
            1 for entry in request.blocks() if entry.get("block", {}).get("type") == "tool_result"
        )
        if results < 10:
            path = f"big{results}.txt"
            return Answer(f"Read {results + 1}.", calls=[Use("read_file", {"path": path})])
        return Answer("", calls=[Use("task_completion", {"result": "done"})])

    anthropic_server.responder = respond
    settings = settings_for(
        anthropic_server, prices=FLAT_CACHE_PRICES, mask_keep_recent=3, mask_batch=3
    )
    session = build_session(settings, workspace)
    try:
        events = await drive(session.agent.run_turn("read the ten big files"))
    finally:
        await session.aclose()
    assert finished(events).reason == "completed"
    batches = [e for e in events if isinstance(e, SummarizationCompleted)]
    assert batches and all(e.strategy == "masking" for e in batches)

    requests = chat_requests(anthropic_server)
    usage = anthropic_server.usage_log
    invalidated = [
        number
        for number, (previous, current) in enumerate(itertools.pairwise(usage), 1)
        if current["cache_read_input_tokens"]
        < previous["cache_read_input_tokens"] + previous["cache_creation_input_tokens"]
    ]
    assert len(invalidated) == len(batches) < len(requests) // 3
    for number in range(1, len(requests)):
        if number not in invalidated:
            assert_prefix_repeated(requests[number - 1], requests[number])
    # Even then the tools and the system prompt are read from the cache.
    for number in invalidated:
        assert usage[number]["cache_read_input_tokens"] > 0


async def test_under_claudes_list_prices_masking_waits_and_the_cache_keeps_hitting(
    anthropic_server: AnthropicServer, workspace: Path
) -> None:
    """With Claude's own prices (reads 0.1 x, writes 1.25 x) a masking batch would re-write the
    whole conversation to save a tenth of its tokens per request: masking waits until keeping
    the outputs has cost as much (docs/adr/0038 §8), so these ten reads never invalidate the
    cache, and every request repeats the one before it."""
    for number in range(10):
        (workspace / f"big{number}.txt").write_text(f"line {number} of text to read back\n" * 40)

    def respond(request: MessagesRequestRecord) -> Reply:
        results = sum(
            1 for entry in request.blocks() if entry.get("block", {}).get("type") == "tool_result"
        )
        if results < 10:
            path = f"big{results}.txt"
            return Answer(f"Read {results + 1}.", calls=[Use("read_file", {"path": path})])
        return Answer("", calls=[Use("task_completion", {"result": "done"})])

    anthropic_server.responder = respond
    session = build_session(
        settings_for(anthropic_server, mask_keep_recent=3, mask_batch=3), workspace
    )
    try:
        assert session.context_manager.services.cache_pricing.rewrites_wait
        events = await drive(session.agent.run_turn("read the ten big files"))
    finally:
        await session.aclose()
    assert finished(events).reason == "completed"
    requests = chat_requests(anthropic_server)
    assert len(requests) == 11
    for number in range(1, len(requests)):
        assert_prefix_repeated(requests[number - 1], requests[number])
