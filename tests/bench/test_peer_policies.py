"""The peers' policies (`codex`, `claude-code`, `openhands`, `gemini-cli`, `opencode`) and
the keep-3/keep-5 masking baselines, against the loopback server as the summarizer."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence

import pytest

from bench.cache_model import RequestTokenizer, prompt_tokens
from bench.gemini_cli_policy import (
    MASKED_TAG,
    MINIMUM_PRUNABLE_TOKENS,
    PROTECT_TOKENS,
    GeminiCliPolicy,
)
from bench.opencode_policy import CLEARED as OPENCODE_CLEARED
from bench.opencode_policy import OpenCodePolicy
from bench.peer_policies import (
    CLAUDE_CODE_CLEARED,
    CLAUDE_CODE_FILE_TOKENS,
    CODEX_SUMMARY_PREFIX,
    CODEX_USER_TOKENS,
    CODEX_WINDOW,
    OPENHANDS_MAX_SIZE,
    ClaudeCodePolicy,
    CodexPolicy,
    OpenHandsPolicy,
    files_read,
    truncate_tokens,
)
from bench.policies import PolicyContext, Summarizer, baseline, parse_policy
from bench.sessions import Session, annotate
from forge.context.conversation import Conversation
from forge.llm.messages import Message, ToolCall
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.tokenizer import get_encoding
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


def context(session: Session, summarizer: Summarizer, budget: int) -> PolicyContext:
    return PolicyContext(session, budget, measure, summarizer, TOKENIZER.count)


def multi_task(calls: int, words: int = 50) -> Session:
    """tool_session with a second user request in the middle (marked as an instruction)."""
    messages = tool_session(calls, words)
    middle = 2 + 2 * (calls // 2)
    messages.insert(middle, Message(role="user", content="Also update the changelog."))
    kinds = ["instruction" if m.role == "user" else None for m in messages]
    return annotate("multi", messages, kinds)


async def test_masking_3_and_5_keep_that_many_newest_outputs(summarizer: Summarizer) -> None:
    session = annotate("s", tool_session(8))
    history = session.messages[:-1]
    for name, keep in (("masking-3", 3), ("masking-5", 5)):
        policy = baseline(parse_policy(name), context(session, summarizer, 100_000))
        assert policy.name == name
        request = await policy.prepare(history)
        verbatim = [m for m in request if m.role == "tool" and m in history]
        assert len(verbatim) == keep
        assert verbatim == [m for m in history if m.role == "tool"][-keep:]


async def test_codex_compacts_at_90_percent_keeping_user_messages_and_one_summary(
    summarizer: Summarizer, llm_server: OpenAIServer
) -> None:
    session = multi_task(12, words=80)
    history = session.messages[:-1]
    size = measure(history)
    policy = CodexPolicy(context(session, summarizer, budget=int(size / 0.95)))
    assert await policy.prepare(history[:-6]) == history[:-6]  # under 90 %: as is
    assert len(llm_server.requests) == 0
    request = await policy.prepare(history)
    assert len(llm_server.requests) == 1
    users = [history[i] for i in session.user_messages()]
    assert request == [history[0], *users, request[-1]]
    assert request[-1].role == "user"
    assert request[-1].content.startswith(CODEX_SUMMARY_PREFIX)
    assert Conversation(request).problems() == []
    # The next message is appended after the compacted history, not compacted again.
    later = [*history, Message(role="assistant", content="Done.")]
    assert (await policy.prepare(later))[-1] is later[-1]
    assert len(llm_server.requests) == 1


async def test_codex_keeps_user_messages_newest_first_up_to_its_token_limit(
    summarizer: Summarizer,
) -> None:
    big = "word " * (CODEX_USER_TOKENS - 100)
    messages = [
        Message(role="system", content="agent"),
        Message(role="user", content="first request " + "old " * 500),
        Message(role="assistant", content="ok"),
        Message(role="user", content=big),
        Message(role="assistant", content="ok"),
        Message(role="user", content="third request"),
    ]
    kinds = [None, "instruction", None, "instruction", None, "instruction"]
    session = annotate("big", messages, kinds)
    policy = CodexPolicy(context(session, summarizer, budget=1000))
    request = await policy.prepare(messages)
    kept = request[1:-1]
    assert kept[-1] is messages[5] and kept[-2] is messages[3]  # newest two whole
    assert kept[0].content.startswith("first request")
    assert "tokens truncated" in kept[0].content  # the one that overflowed, cut
    assert sum(TOKENIZER.count(m.content) for m in kept) <= CODEX_USER_TOKENS + 20


async def test_claude_code_compacts_at_83_5_percent_and_re_attaches_five_recent_files(
    summarizer: Summarizer, llm_server: OpenAIServer
) -> None:
    session = annotate("s", tool_session(8, output_words=60))
    history = session.messages[:-1]
    size = measure(history)
    policy = ClaudeCodePolicy(context(session, summarizer, budget=int(size / 0.83)))
    assert await policy.prepare(history) == history  # at 83 % of the budget: as is
    policy = ClaudeCodePolicy(context(session, summarizer, budget=int(size / 0.84)))
    request = await policy.prepare(history)
    assert len(llm_server.requests) == 1
    assert request[0] is history[0]
    assert request[1].content.startswith("This session is being continued")
    attached = request[2:]
    assert len(attached) == 5
    assert [m.content.splitlines()[0] for m in attached] == [
        f"[File re-read after compaction: src/f{n}.py]" for n in range(3, 8)
    ]
    assert attached[-1].content.endswith(history[-1].content)
    assert Conversation(request).problems() == []


def test_claude_code_files_are_the_latest_reads_cut_to_five_thousand_tokens() -> None:
    view = ToolCall(
        id="v", name="str_replace_editor", arguments=json.dumps({"command": "view", "path": "a"})
    )
    edit = ToolCall(
        id="e", name="str_replace_editor", arguments=json.dumps({"command": "create", "path": "b"})
    )
    messages = [
        Message(role="assistant", content="", tool_calls=(view, edit)),
        Message(role="tool", content="old a", tool_call_id="v"),
        Message(role="tool", content="created", tool_call_id="e"),
        Message(role="assistant", content="```\ncat c.txt\n```"),
        Message(role="user", content="text of c"),
    ]
    assert files_read(messages, {4}) == {"a": "old a", "c.txt": "text of c"}
    long = "token " * (CLAUDE_CODE_FILE_TOKENS * 2)
    cut = truncate_tokens(long, CLAUDE_CODE_FILE_TOKENS, TOKENIZER.count)
    assert TOKENIZER.count(cut.rsplit("\n", 1)[0]) <= CLAUDE_CODE_FILE_TOKENS
    assert "tokens truncated" in cut


async def test_openhands_condenses_past_120_messages_to_half(
    summarizer: Summarizer, llm_server: OpenAIServer
) -> None:
    session = annotate("long", tool_session(70, output_words=5))
    history = session.messages[:-1]  # 2 + 140 messages
    policy = OpenHandsPolicy(context(session, summarizer, budget=10**9))
    assert await policy.prepare(history[:OPENHANDS_MAX_SIZE]) == history[:OPENHANDS_MAX_SIZE]
    request = await policy.prepare(history)
    assert len(llm_server.requests) == 1
    assert request[:4] == history[:4]
    assert request[4].content.startswith("[Summary of forgotten events]")
    assert len(request) <= OPENHANDS_MAX_SIZE // 2 + 1
    assert request[-1] is history[-1]
    assert Conversation(request).problems() == []
    # It grows again from there and condenses only when it passes 120 once more.
    assert len(await policy.prepare(history)) == len(request)
    assert len(llm_server.requests) == 1


async def test_claude_code_microcompact_clears_all_but_five_once_more_than_twelve(
    summarizer: Summarizer, llm_server: OpenAIServer
) -> None:
    session = annotate("s", tool_session(14, output_words=20))
    history = session.messages[:-1]
    policy = ClaudeCodePolicy(context(session, summarizer, budget=10**9))
    assert await policy.prepare(history[: 2 + 2 * 12]) == history[: 2 + 2 * 12]  # 12 results
    request = await policy.prepare(history)
    outputs = [m for m in request if m.role == "tool"]
    assert [m.content for m in outputs[:9]] == [CLAUDE_CODE_CLEARED] * 9
    assert outputs[9:] == [m for m in history if m.role == "tool"][-5:]
    assert len(llm_server.requests) == 0 and Conversation(request).problems() == []


async def test_codex_scaled_keeps_its_allowance_as_a_share_of_the_budget(
    summarizer: Summarizer,
) -> None:
    session = annotate("s", tool_session(2))
    assert CodexPolicy(context(session, summarizer, 8_000)).allowance == CODEX_USER_TOKENS
    scaled = CodexPolicy(context(session, summarizer, 8_000), scaled=True)
    assert (scaled.name, scaled.allowance) == ("codex-scaled", 20_000 * 8_000 // CODEX_WINDOW)


async def test_openhands_100_condenses_past_100_keeping_the_first_message(
    summarizer: Summarizer, llm_server: OpenAIServer
) -> None:
    session = annotate("long", tool_session(60, output_words=5))
    history = session.messages[:-1]  # 2 + 120 messages
    policy = baseline(parse_policy("openhands-100"), context(session, summarizer, 10**9))
    assert await policy.prepare(history[:100]) == history[:100]
    request = await policy.prepare(history)
    assert request[0] is history[0]
    assert request[1].content.startswith("[Summary of forgotten events]")
    assert len(request) <= 51 and request[-1] is history[-1]
    assert Conversation(request).problems() == []


async def test_gemini_cli_masks_outputs_past_its_protected_50k_once_30k_are_prunable(
    summarizer: Summarizer, llm_server: OpenAIServer
) -> None:
    session = annotate("s", tool_session(40, output_words=700))
    history = session.messages[:-1]
    sizes = [TOKENIZER.count(m.content) for m in history if m.role == "tool"]
    assert sum(sizes) > PROTECT_TOKENS + MINIMUM_PRUNABLE_TOKENS
    request = await GeminiCliPolicy(context(session, summarizer, 10**9)).prepare(history)
    outputs = [m for m in request if m.role == "tool"]
    masked = [m for m in outputs if m.content.startswith(MASKED_TAG)]
    kept = outputs[len(masked) :]
    assert masked and kept and all(not m.content.startswith(MASKED_TAG) for m in kept)
    assert sum(TOKENIZER.count(m.content) for m in kept[1:]) <= PROTECT_TOKENS
    assert len(llm_server.requests) == 0 and Conversation(request).problems() == []
    small = annotate("s", tool_session(10, output_words=700))
    assert (
        await GeminiCliPolicy(context(small, summarizer, 10**9)).prepare(small.messages[:-1])
        == small.messages[:-1]
    )


async def test_gemini_cli_compresses_at_half_the_budget_only_at_a_user_request(
    summarizer: Summarizer, llm_server: OpenAIServer
) -> None:
    single = annotate("s", tool_session(12, output_words=80))
    history = single.messages[:-1]
    budget = int(measure(history) / 0.6)
    policy = GeminiCliPolicy(context(single, summarizer, budget))
    assert await policy.prepare(history) == history  # no split point: nothing compressed
    session = multi_task(12, words=80)
    history = session.messages[:-1]
    policy = GeminiCliPolicy(context(session, summarizer, int(measure(history) / 0.6)))
    request = await policy.prepare(history)
    assert len(llm_server.requests) == 1
    assert request[1].content.startswith("<state_snapshot>")
    middle = session.user_messages()[-1]
    assert request[3:] == history[middle:]
    assert Conversation(request).problems() == []


async def test_opencode_prunes_older_turns_and_compacts_at_the_budget(
    summarizer: Summarizer, llm_server: OpenAIServer
) -> None:
    messages = tool_session(30, output_words=1200)
    for position in (22, 43, 64):  # four requests of ten reads each
        messages.insert(position, Message(role="user", content=f"Request at {position}."))
    kinds = ["instruction" if m.role == "user" else None for m in messages]
    session = annotate("three", messages, kinds)
    history = session.messages[:-1]
    policy = OpenCodePolicy(context(session, summarizer, 10**9))
    request = await policy.prepare(history)
    # Prune ran when the fourth request came: the last two turns (from the second request on)
    # are spared, and of the first turn's ten outputs (about 60k tokens) the newest 40k stay.
    second = session.user_messages()[1]
    cleared = [i for i, m in enumerate(request) if m.content == OPENCODE_CLEARED]
    assert cleared and max(cleared) < second and request[second - 1] is history[second - 1]
    assert all(m is history[i] for i, m in enumerate(request) if i >= second)
    assert len(llm_server.requests) == 0
    small = OpenCodePolicy(context(session, summarizer, 20_000))
    request = await small.prepare(history)
    assert len(llm_server.requests) == 1
    assert request[1].content == "What did we do so far?" and request[2].role == "assistant"
    assert request[-1] is history[-1] and measure(request) < 20_000
    assert Conversation(request).problems() == []
