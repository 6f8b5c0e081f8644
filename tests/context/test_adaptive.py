"""The adaptive summarizer against the loopback server: levels, map-reduce, collapse, errors."""

from __future__ import annotations

import itertools

import pytest

from forge.config.settings import SummarizerSettings
from forge.context import prompts
from forge.context.adaptive import AdaptiveSummarizer, SummaryLevel
from forge.context.errors import EmptySummaryError
from forge.context.prompts import ContentType
from forge.llm.errors import ServerError
from tests.context.builders import counter, provider_for, words
from tests.support.openai_server import Fault, OpenAIServer, RecordedRequest, Text


def _task(request: RecordedRequest) -> str:
    return request.messages[-1]["content"].split("\n", 1)[0]


def _kind(request: RecordedRequest) -> str:
    task = _task(request)
    for kind, template in (
        ("map", prompts.MAP_TASK),
        ("collapse", prompts.COLLAPSE_TASK),
        ("synthesis", prompts.SYNTHESIS_TASK),
        ("brief", prompts.BRIEF_TASK),
        ("single", prompts.SINGLE_TASK),
    ):
        if task.startswith(template.split("{")[0]):
            return kind
    raise AssertionError(f"unknown request {task!r}")


def _paragraphs(tokens: int) -> str:
    """About `tokens` tokens in paragraphs of sentences (for chunking on natural boundaries)."""
    paragraph = " ".join(f"Fact {n} about the parser." for n in range(8))
    count = -(-tokens * 4 // (len(paragraph) + 2))
    return "\n\n".join([paragraph] * count)


@pytest.mark.parametrize(
    ("tokens", "level", "requests"),
    [
        (99, SummaryLevel.NONE, 0),
        (100, SummaryLevel.BRIEF, 1),
        (500, SummaryLevel.BRIEF, 1),
        (501, SummaryLevel.SINGLE, 1),
        (2048, SummaryLevel.SINGLE, 1),
    ],
)
async def test_levels_by_size(
    llm_server: OpenAIServer, tokens: int, level: SummaryLevel, requests: int
) -> None:
    llm_server.responder = lambda request: Text("I read the parser and found the bug.")
    summarizer = AdaptiveSummarizer(counter(), SummarizerSettings())
    text = words(tokens)
    async with provider_for(llm_server) as provider:
        result = await summarizer.summarize(text, provider)
    assert result.level is level
    assert len(llm_server.requests) == requests
    assert result.input_tokens == tokens
    if level is SummaryLevel.NONE:
        assert result.text == text
        assert result.llm_calls == 0
    else:
        assert result.text == "I read the parser and found the bug."
        assert result.llm_calls == 1
        kind = "brief" if level is SummaryLevel.BRIEF else "single"
        assert _kind(llm_server.requests[0]) == kind
        assert result.model == "main-model"


async def test_map_reduce_chunks_maps_concurrently_collapses_and_synthesizes(
    llm_server: OpenAIServer,
) -> None:
    settings = SummarizerSettings(
        chunk_size=200, chunk_overlap=20, max_concurrent=3, token_max=300, max_collapse_depth=5
    )

    def respond(request: RecordedRequest) -> Text:
        kind = _kind(request)
        if kind == "map":
            return Text(words(80, "map"), delay=0.1)
        if kind == "collapse":
            return Text(words(60, "col"))
        return Text("FINAL: the parser ignores parent defaults.")

    llm_server.responder = respond
    summarizer = AdaptiveSummarizer(counter(), settings)
    text = _paragraphs(2000)
    async with provider_for(llm_server) as provider:
        result = await summarizer.summarize(
            text,
            provider,
            content_type=ContentType.TOOL_OUTPUT,
            target_tokens=250,
            prior_summary="I was fixing the CLI parser.",
        )
    kinds = [_kind(request) for request in llm_server.requests]
    maps = kinds.count("map")
    assert result.level is SummaryLevel.MAP_REDUCE
    assert result.chunks == maps >= 10
    assert 1 < llm_server.max_active <= 3  # maps overlap, bounded by max_concurrent
    # 80-token map summaries: 3 fit in token_max 300, so ceil(maps / 3) collapse calls
    assert kinds.count("collapse") == -(-maps // 3)
    assert kinds[-1] == "synthesis" and kinds.count("synthesis") == 1
    assert result.collapse_depth == 1
    assert result.llm_calls == len(llm_server.requests)
    assert result.text == "FINAL: the parser ignores parent defaults."
    assert result.compression_ratio == result.input_tokens / result.output_tokens
    final = llm_server.requests[-1].messages[-1]["content"]
    assert "at most about 250 tokens" in final
    assert "I was fixing the CLI parser." in final
    for request in llm_server.requests:
        if _kind(request) == "map":
            material = request.messages[-1]["content"].split("<material>\n", 1)[1]
            assert counter().count_text(material.rsplit("\n</material>", 1)[0]) <= 200


async def test_collapse_stops_at_the_depth_limit_with_a_warning(
    llm_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    settings = SummarizerSettings(
        chunk_size=200, chunk_overlap=0, max_concurrent=5, token_max=100, max_collapse_depth=2
    )

    def respond(request: RecordedRequest) -> Text:
        kind = _kind(request)
        if kind == "synthesis":
            return Text("final words")
        return Text(words(150, "big"))  # never shrinks below token_max

    llm_server.responder = respond
    summarizer = AdaptiveSummarizer(counter(), settings)
    async with provider_for(llm_server) as provider:
        result = await summarizer.summarize(_paragraphs(800), provider)
    kinds = [_kind(request) for request in llm_server.requests]
    assert result.collapse_depth == 2
    assert result.warnings and "2 collapse rounds" in result.warnings[0]
    assert "collapse rounds" in caplog.text
    assert kinds[-1] == "synthesis"
    assert "(round 2)" in "".join(r.text() for r in llm_server.requests)
    assert "(round 3)" not in "".join(r.text() for r in llm_server.requests)
    assert result.text == "final words"


async def test_single_call_limit_decides_between_one_call_and_map_reduce(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("short summary")
    text = _paragraphs(3000)
    async with provider_for(llm_server) as provider:
        wide = AdaptiveSummarizer(counter(), SummarizerSettings(), single_call_limit=100_000)
        assert (await wide.summarize(text, provider)).level is SummaryLevel.SINGLE
        assert len(llm_server.requests) == 1
        narrow = AdaptiveSummarizer(counter(), SummarizerSettings(), single_call_limit=1000)
        assert narrow.chunk_size == 1000
        result = await narrow.summarize(text, provider)
    assert result.level is SummaryLevel.MAP_REDUCE
    assert result.chunks >= 3


async def test_server_errors_propagate_typed(llm_server: OpenAIServer) -> None:
    llm_server.responder = lambda request: Fault(500, {"error": {"message": "boom"}})
    summarizer = AdaptiveSummarizer(counter(), SummarizerSettings())
    async with provider_for(llm_server) as provider:
        with pytest.raises(ServerError):
            await summarizer.summarize(words(300), provider)


async def test_an_empty_answer_is_an_error_never_an_empty_summary(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("   ")
    summarizer = AdaptiveSummarizer(counter(), SummarizerSettings())
    async with provider_for(llm_server) as provider:
        with pytest.raises(EmptySummaryError):
            await summarizer.summarize(words(300), provider)


@pytest.mark.parametrize("content_type", list(ContentType))
async def test_each_content_type_has_its_own_guidance(
    llm_server: OpenAIServer, content_type: ContentType
) -> None:
    llm_server.responder = lambda request: Text("ok summary")
    summarizer = AdaptiveSummarizer(counter(), SummarizerSettings())
    async with provider_for(llm_server) as provider:
        await summarizer.summarize(
            words(300), provider, content_type=content_type, instructions="keep the SQL"
        )
    sent = llm_server.requests[0].messages
    assert sent[0]["role"] == "system" and "first person" in sent[0]["content"]
    assert prompts._GUIDANCE[content_type] in sent[1]["content"]
    assert "keep the SQL" in sent[1]["content"]


@pytest.mark.parametrize(
    ("limit", "tokens", "level"),
    [
        (1000, 99, SummaryLevel.NONE),
        (1000, 1000, SummaryLevel.SINGLE),
        (1000, 1001, SummaryLevel.MAP_REDUCE),  # below chunk_size, but above the window
        (300, 300, SummaryLevel.BRIEF),
        (300, 301, SummaryLevel.MAP_REDUCE),  # even a "brief" text must fit one request
        (None, 2048, SummaryLevel.SINGLE),
        (None, 2049, SummaryLevel.MAP_REDUCE),
    ],
)
def test_nothing_above_the_single_call_limit_goes_in_one_request(
    limit: int | None, tokens: int, level: SummaryLevel
) -> None:
    summarizer = AdaptiveSummarizer(counter(), SummarizerSettings(), single_call_limit=limit)
    assert summarizer.level_for(tokens) is level


async def test_a_small_summarizer_window_is_never_overflowed(llm_server: OpenAIServer) -> None:
    llm_server.responder = lambda request: Text("I read part of the log.")
    summarizer = AdaptiveSummarizer(counter(), SummarizerSettings(), single_call_limit=1000)
    async with provider_for(llm_server) as provider:
        result = await summarizer.summarize(_paragraphs(1500), provider)
    assert result.level is SummaryLevel.MAP_REDUCE
    for request in llm_server.requests:
        material = request.messages[-1]["content"].split("<material>\n", 1)[1]
        assert counter().count_text(material.rsplit("\n</material>", 1)[0]) <= 1000


async def test_default_map_reduce_uses_2048_token_chunks_overlapping_by_200(
    llm_server: OpenAIServer,
) -> None:
    settings = SummarizerSettings()
    assert (settings.chunk_size, settings.chunk_overlap, settings.max_concurrent) == (2048, 200, 5)
    assert (settings.token_max, settings.max_collapse_depth) == (3000, 10)

    def respond(request: RecordedRequest) -> Text:
        delay = 0.2 if _kind(request) == "map" else 0.0
        return Text(f"I noted part {len(llm_server.requests)}.", delay=delay)

    llm_server.responder = respond
    summarizer = AdaptiveSummarizer(counter(), settings)
    text = "\n\n".join(
        " ".join(f"Fact {p}.{n} about the parser." for n in range(8)) for p in range(240)
    )
    assert 12_000 < counter().count_text(text) < 15_000
    async with provider_for(llm_server) as provider:
        result = await summarizer.summarize(text, provider)
    maps = [r for r in llm_server.requests if _kind(r) == "map"]
    assert result.chunks == len(maps) >= 7
    assert 1 < llm_server.max_active <= 5
    materials = [
        r.messages[-1]["content"].split("<material>\n", 1)[1].rsplit("\n</material>", 1)[0]
        for r in maps
    ]
    for material in materials:
        assert counter().count_text(material) <= 2048
    # each chunk after the first starts with (about 200 tokens of) the end of the one before
    ordered = sorted(materials, key=text.index)
    for before, after in itertools.pairwise(ordered):
        shared = next(n for n in range(len(after), 0, -1) if before.endswith(after[:n]))
        assert 150 <= counter().count_text(after[:shared]) <= 200


def test_the_working_memory_prompt_asks_for_what_the_agent_needs() -> None:
    system_prompt = prompts.SUMMARIZER_SYSTEM_PROMPT
    for required in (
        "first person",
        "file paths",
        "symbol names",
        "commands and their exit codes",
        "error messages",
        "decisions",
        "dead ends",
        "the user's instructions and corrections",
        "open items",
    ):
        assert required in system_prompt, required
    goals = prompts._GUIDANCE[ContentType.USER_GOALS]
    for required in ("intent", "correction", "lasting constraint"):
        assert required in goals, required
