"""The replay's context policies, against the loopback server as the summarizer."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest

from bench.cache_model import RequestTokenizer, prompt_tokens
from bench.policies import (
    DEFAULT_POLICIES,
    EAGER_AGE,
    MASKING_KEEP,
    SUMMARIZE_KEEP,
    SUMMARY_HEADING,
    TOOL_SUMMARY_HEADING,
    EagerPolicy,
    ForgePolicy,
    MaskingFitPolicy,
    MaskingPolicy,
    NonePolicy,
    PolicyContext,
    SummarizeAt90Policy,
    Summarizer,
    cache_pricing,
    forge_settings,
    parse_policy,
    placeholder_text,
    tool_groups,
)
from bench.sessions import Session, annotate
from forge.context.cache_pricing import NO_CACHE, CachePricing
from forge.context.conversation import Conversation
from forge.llm.messages import Message
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.tokenizer import TiktokenCounter, get_encoding
from tests.bench.sessions_support import tool_session
from tests.support.openai_server import OpenAIServer, RecordedRequest, Text

TOKENIZER = RequestTokenizer(get_encoding("o200k_base"))


def measure(messages: Sequence[Message]) -> int:
    return prompt_tokens(TOKENIZER.request((), messages))


@pytest.fixture
async def summarizer(llm_server: OpenAIServer) -> AsyncIterator[Summarizer]:
    def answer(request: RecordedRequest) -> Text:
        return Text(f"summary {len(llm_server.requests)}")

    llm_server.responder = answer
    provider = OpenAICompatibleProvider("gpt-4o-mini", llm_server.base_url, "k", max_retries=0)
    yield Summarizer(provider)
    await provider.aclose()


def context(session: Session, summarizer: Summarizer, budget: int = 100_000) -> PolicyContext:
    return PolicyContext(session, budget, measure, summarizer)


async def test_none_sends_the_history_unchanged(summarizer: Summarizer) -> None:
    session = annotate("s", tool_session(3))
    history = session.messages[:-1]
    assert await NonePolicy(context(session, summarizer)).prepare(history) == history


async def test_masking_keeps_the_newest_ten_tool_outputs_and_masks_older_ones(
    summarizer: Summarizer, llm_server: OpenAIServer
) -> None:
    session = annotate("s", tool_session(14))
    history = session.messages[:-1]
    request = await MaskingPolicy(context(session, summarizer)).prepare(history)
    outputs = [i for i, m in enumerate(history) if m.role == "tool"]
    old, newest = outputs[:-MASKING_KEEP], outputs[-MASKING_KEEP:]
    assert len(old) == 4
    for index in old:
        assert request[index].content == placeholder_text(history[index])
        assert request[index].content.startswith("[Old tool output omitted: ")
        assert request[index].tool_call_id == history[index].tool_call_id
    for index in newest:
        assert request[index] is history[index]
    assert [m for i, m in enumerate(request) if i not in old] == [
        m for i, m in enumerate(history) if i not in old
    ]
    assert Conversation(request).problems() == []
    assert llm_server.requests == []  # masking never asks a model


async def test_masking_treats_text_action_observations_as_tool_output(
    summarizer: Summarizer,
) -> None:
    messages = [Message(role="user", content="Fix it.")]
    for number in range(12):
        messages.append(Message(role="assistant", content=f"```bash\nls {number}\n```"))
        messages.append(Message(role="user", content=f"output {number}\nmore"))
    session = annotate("text", messages)
    request = await MaskingPolicy(context(session, summarizer)).prepare(messages)
    assert request[0].content == "Fix it."  # the instruction is not an observation
    assert request[2].content == "[Old tool output omitted: 2 lines]"
    assert request[4].content == "[Old tool output omitted: 2 lines]"
    assert request[6].content == "output 2\nmore"


async def test_summarize_at_90_keeps_instructions_and_the_newest_twenty(
    summarizer: Summarizer, llm_server: OpenAIServer
) -> None:
    session = annotate("s", tool_session(30))
    history = session.messages[:-1]
    policy = SummarizeAt90Policy(context(session, summarizer, budget=measure(history)))
    request = await policy.prepare(history)
    assert len(llm_server.requests) == 1
    assert request[0] is history[0]  # the system prompt
    assert request[1] is history[1]  # the instruction
    assert request[2].content == f"{SUMMARY_HEADING}\nsummary 1"
    tail = request[3:]
    assert len(tail) >= SUMMARIZE_KEEP
    assert tail == history[-len(tail) :]
    assert tail[0].role != "tool"
    assert Conversation(request).problems() == []
    material = llm_server.requests[0].messages[-1]["content"]
    assert "<material>" in material and "Fix the parser." not in material
    # Below 90 % nothing more is summarized; the summary stays in place.
    policy.context.budget = 10 * measure(history)
    again = await policy.prepare(session.messages[:-1])
    assert again == request
    assert len(llm_server.requests) == 1


async def test_summarize_at_90_does_nothing_below_the_threshold(
    summarizer: Summarizer, llm_server: OpenAIServer
) -> None:
    session = annotate("s", tool_session(30))
    history = session.messages[:-1]
    budget = int(measure(history) / 0.9) + 10
    request = await SummarizeAt90Policy(context(session, summarizer, budget)).prepare(history)
    assert request == history
    assert llm_server.requests == []


async def test_eager_summarizes_each_group_once_it_is_twenty_messages_old(
    summarizer: Summarizer, llm_server: OpenAIServer
) -> None:
    session = annotate("s", tool_session(15))
    history = session.messages[:-1]
    groups = tool_groups(session, history)
    assert len(groups) == 15 and groups[0] == (2, 3)
    old = [g for g in groups if len(history) - 1 - g[1] >= EAGER_AGE]
    assert 0 < len(old) < len(groups)
    policy = EagerPolicy(context(session, summarizer))
    request = await policy.prepare(history)
    summaries = [m for m in request if m.content.startswith(TOOL_SUMMARY_HEADING)]
    assert len(summaries) == len(old) == len(llm_server.requests)
    assert len(request) == len(history) - len(old)
    assert request[-2 * (len(groups) - len(old)) :] == history[-2 * (len(groups) - len(old)) :]
    assert Conversation(request).problems() == []
    # The same history again: the summaries are reused, no new call.
    assert await policy.prepare(history) == request
    assert len(llm_server.requests) == len(old)


async def test_forge_policy_runs_forges_manager_on_the_summarization_model(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("I read the files.")
    session = annotate("s", tool_session(30))
    history = session.messages[:-1]
    spec = parse_policy("forge")
    provider = OpenAICompatibleProvider("gpt-4o", llm_server.base_url, "k", max_retries=0)
    policy = ForgePolicy(
        "forge",
        forge_settings(spec, 3000),
        provider,
        TiktokenCounter("gpt-4o"),
        context_window=128_000,
        summarization_model="gpt-4o-mini",
    )
    try:
        assert policy.max_tokens == 3000
        request = await policy.prepare(history)
        policy.sent(measure(request))
    finally:
        await policy.aclose()
    assert measure(request) < measure(history)
    assert Conversation(request).problems() == []
    assert llm_server.requests
    assert {r.model for r in llm_server.requests} == {"gpt-4o-mini"}


def test_policy_names_and_forge_variants() -> None:
    assert parse_policy("masking").kind == "masking"
    variant = parse_policy("forge:min_tool_calls_to_summarize=5,excluded_tools=a;b")
    assert variant.kind == "forge"
    assert variant.name == "forge:min_tool_calls_to_summarize=5,excluded_tools=a;b"
    settings = forge_settings(variant, 8000)
    assert settings.min_tool_calls_to_summarize == 5
    assert settings.excluded_tools == ["a", "b"]
    assert settings.max_tokens == 8000
    assert forge_settings(parse_policy("forge"), None).max_tokens is None
    nested = parse_policy("forge:summarizer.max_concurrent=2")
    assert forge_settings(nested, 8000).summarizer.max_concurrent == 2


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("lru", "unknown policy"),
        ("forge:no_such_key=1", "unknown setting 'no_such_key'"),
        ("forge:summarizer.nope=1", "unknown setting 'nope'"),
        ("forge:max_tokens=100", "set by --budget"),
        ("forge:min_tool_calls_to_summarize=-3", "min_tool_calls_to_summarize"),
        ("forge:threshold", "is not key=value"),
    ],
)
def test_bad_policy_names_are_errors(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_policy(name)


async def test_masking_fit_masks_more_of_the_newest_ten_only_to_fit_the_budget(
    summarizer: Summarizer,
) -> None:
    session = annotate("s", tool_session(14, output_words=150))
    history = session.messages[:-1]
    roomy = await MaskingFitPolicy(context(session, summarizer)).prepare(history)
    masking_10 = await MaskingPolicy(context(session, summarizer)).prepare(history)
    assert [m.content for m in roomy] == [m.content for m in masking_10]  # it is masking-10
    budget = measure(masking_10) - 300
    fitted = await MaskingFitPolicy(context(session, summarizer, budget)).prepare(history)
    assert measure(fitted) <= budget < measure(masking_10)
    kept = [m for m in fitted if m.role == "tool" and not m.content.startswith("[Old tool")]
    assert 0 < len(kept) < MASKING_KEEP  # the oldest of the ten masked, the newest kept
    assert kept[-1] is history[-1]  # the newest output stays whole
    assert Conversation(fitted).problems() == []


def test_forge_policies_are_told_the_cache_prices_of_their_price_model() -> None:
    assert parse_policy("forge").cache == "openai"
    anthropic = parse_policy("forge@anthropic:mask_batch=5")
    assert (anthropic.kind, anthropic.cache, anthropic.overrides) == (
        "forge",
        "anthropic",
        {"mask_batch": 5},
    )
    assert cache_pricing("anthropic").rewrites_wait
    assert cache_pricing("openai") == CachePricing(read=0.5, write=1.0)
    assert cache_pricing("none") == NO_CACHE
    with pytest.raises(ValueError, match="cache prices"):
        parse_policy("forge@gemini")


def test_every_peer_is_in_the_default_set() -> None:
    peers = {"codex", "codex-scaled", "claude-code", "openhands", "openhands-100"}
    assert peers | {"gemini-cli", "opencode", "forge", "forge@anthropic"} <= set(DEFAULT_POLICIES)
    assert all(parse_policy(name).name == name for name in DEFAULT_POLICIES)
