"""Nothing lost for good (issue 37, ADR 0050): every strategy that removes a tool output leaves
its recall key in the request, and `recall` brings the original back byte-exact from the
session file — a summary carries the keys of everything it folded, a summary of summaries too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from forge.agent.history.recall_archive import SessionArchive
from forge.agent.history.session_file import SessionLog, SessionStore
from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.fallback import drop_oldest, prune_tool_outputs
from forge.context.last_resort import cap_outputs_until
from forge.context.recall import MAX_LISTED_KEYS, RECALL_KEY_LENGTH, recall_keys_line
from forge.context.strategies.goal_batch import GoalBatchCompactionStrategy
from forge.context.strategies.ingest_cap import IngestCapStrategy
from forge.context.strategies.masking import ObservationMaskingStrategy
from forge.context.strategies.threshold import ThresholdSummarizationStrategy
from forge.context.strategies.tool_call import ToolCallSummarizationStrategy
from forge.llm.messages import Message, MessageKind, assistant, user
from tests.context.builders import (
    counter,
    filler,
    group,
    llm_tiers,
    provider_for,
    run_for,
    services,
    task_start,
    words,
)
from tests.support.openai_server import OpenAIServer, Text


def recorded(
    tmp_path: Path, *parts: Message | Sequence[Message]
) -> tuple[Conversation, SessionLog]:
    """A conversation whose every message goes to a real session file, as in a session."""
    log = SessionStore(tmp_path / "sessions").create(tmp_path, "m")
    chat = Conversation()
    log.attach(chat)
    for part in parts:
        for message in [part] if isinstance(part, Message) else part:
            chat.append(message)
    return chat, log


def outputs(chat: Conversation) -> list[Message]:
    return [m for m in chat.messages if m.role == "tool"]


def assert_nothing_lost(chat: Conversation, log: SessionLog, originals: Sequence[Message]) -> int:
    """Every original output is verbatim in the request or named there by its recall key, and
    the key brings it back byte-exact from the session file; returns how many were removed."""
    request = json.dumps(chat.to_api(), ensure_ascii=False)
    archive = SessionArchive(log.path)  # as after --continue: the file read afresh
    removed = 0
    for original in originals:
        if any(m.content == original.content for m in chat.messages):
            continue
        removed += 1
        key = original.id[:RECALL_KEY_LENGTH]
        assert key in request, f"the key of {original.name} output {key} left the request"
        assert archive.find(key).message.content == original.content
    assert chat.is_valid()
    return removed


def reads(count: int, tokens: int = 300, start: int = 0) -> list[Message]:
    return [
        m
        for n in range(start, start + count)
        for m in group("read_file", words(tokens, f"r{n}x"), arguments={"path": f"src/m{n}.py"})
    ]


def test_masking_keeps_the_key_of_every_masked_output(tmp_path: Path) -> None:
    chat, log = recorded(tmp_path, task_start(), reads(8))
    originals = outputs(chat)
    masking = ObservationMaskingStrategy(ContextSettings(), counter())
    assert masking.apply(chat, 100_000, force=True) > 0
    assert assert_nothing_lost(chat, log, originals) > 0


def test_the_ingest_cap_and_the_last_resort_keep_the_key_of_the_uncut_original(
    tmp_path: Path,
) -> None:
    chat, log = recorded(tmp_path, task_start(), reads(6, tokens=1200))
    originals = outputs(chat)
    exact = counter()
    cap = IngestCapStrategy(ContextSettings(max_tokens=8000), exact)
    limit = exact.count_messages(chat.messages) - 2000
    cut = cap_outputs_until(
        chat, limit, cap, max_tokens=8000, excluded_tools=(),
        current=lambda c: exact.count_messages(c.messages),
    )  # fmt: skip
    assert cut
    assert assert_nothing_lost(chat, log, originals) == 3  # the newest three stay whole


def test_an_output_cut_again_then_masked_or_dropped_keeps_the_key_of_the_uncut_original(
    tmp_path: Path,
) -> None:
    """The last resort halves its cap, so an output is cut more than once; whatever later
    stands for it (a placeholder, the fallback's marker) names the uncut original, not an
    earlier cut copy (the replay's long OpenHands session lost keys this way at 8k)."""
    chat, log = recorded(tmp_path, task_start(), reads(6, tokens=1200), user("go on"), reads(2))
    originals = outputs(chat)
    exact = counter()
    cap = IngestCapStrategy(ContextSettings(max_tokens=8000), exact)
    limit = exact.count_messages(chat.messages) - 3000
    cuts = cap_outputs_until(
        chat, limit, cap, max_tokens=8000, excluded_tools=(),
        current=lambda c: exact.count_messages(c.messages),
    )  # fmt: skip
    capped = [m for m in outputs(chat) if m.meta.get("capped")]
    assert cuts > len(capped), "the test needs an output the last resort cut more than once"
    assert all(m.replaces[0] in {o.id for o in originals} for m in outputs(chat) if m.replaces)
    masking = ObservationMaskingStrategy(ContextSettings(), counter())
    assert masking.apply(chat, 100_000, force=True) > 0
    assert assert_nothing_lost(chat, log, originals) >= 3
    total = exact.count_messages(chat.messages)
    assert drop_oldest(chat, exact, target_tokens=total // 2, excluded_tools=(), keep_recent=2)
    assert assert_nothing_lost(chat, log, originals) >= 6


def test_the_fallback_keeps_the_keys_of_pruned_and_dropped_outputs(tmp_path: Path) -> None:
    chat, log = recorded(tmp_path, task_start(), reads(4), user("go on"), reads(4, start=4))
    originals = outputs(chat)
    exact = counter()
    total = exact.count_messages(chat.messages)
    assert prune_tool_outputs(
        chat, exact, target_tokens=total - 300, excluded_tools=(), keep_recent=2
    )
    assert drop_oldest(chat, exact, target_tokens=0, excluded_tools=(), keep_recent=2)
    assert any(m.meta.get("step") == "drop" for m in chat.messages)
    assert assert_nothing_lost(chat, log, originals) >= 6


async def test_tool_call_summaries_keep_the_keys_of_their_outputs(
    llm_server: OpenAIServer, tmp_path: Path
) -> None:
    llm_server.responder = lambda request: Text("Read a module of helpers.")
    chat, log = recorded(tmp_path, task_start(), reads(3), filler(25))
    originals = outputs(chat)
    strategy = ToolCallSummarizationStrategy(services(llm_tiers()))
    async with provider_for(llm_server) as provider:
        assert await strategy.run(chat, provider, run_for([])) == 3
    assert assert_nothing_lost(chat, log, originals) == 3


async def test_threshold_summaries_keep_the_keys_of_everything_folded_even_when_summarized_again(
    llm_server: OpenAIServer, tmp_path: Path
) -> None:
    llm_server.responder = lambda request: Text("Read the modules; nothing to change yet.")
    chat, log = recorded(tmp_path, task_start(), reads(6), assistant("read six"))
    strategy = ThresholdSummarizationStrategy(services(llm_tiers()))
    async with provider_for(llm_server) as provider:
        assert await strategy.run(chat, provider, run_for([]))
        first = [m for m in chat.messages if m.kind is MessageKind.SUMMARY]
        assert first
        for message in [*reads(6, start=6), assistant("read six more")]:
            chat.append(message)
        assert await strategy.run(chat, provider, run_for([]))
    originals = [m for m in log_messages(log) if m.role == "tool"]
    assert len(originals) == 12
    assert assert_nothing_lost(chat, log, originals) >= 10


async def test_goal_batches_keep_the_keys_of_the_work_they_fold(
    llm_server: OpenAIServer, tmp_path: Path
) -> None:
    llm_server.responder = lambda request: Text("Requests 1-3 read their modules.")
    turns = [
        m
        for n in range(3)
        for m in (user(f"request {n}: read m{n}"), *reads(1, start=n), assistant(f"done {n}"))
    ]
    chat, log = recorded(tmp_path, task_start(), turns, user("and now the docs"), filler(25))
    originals = outputs(chat)
    strategy = GoalBatchCompactionStrategy(services(llm_tiers(goal_batch_min_turns=3)))
    async with provider_for(llm_server) as provider:
        assert await strategy.run(chat, provider, run_for([])) == 3
    assert assert_nothing_lost(chat, log, originals) == 3


def log_messages(log: SessionLog) -> list[Message]:
    """Every message the session file recorded, as first recorded."""
    archive = SessionArchive(log.path)
    seen: list[Message] = []
    for line in log.path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "message":
            seen.append(archive.find(record["message"]["id"]).message)
    return seen


def test_a_summary_lists_the_newest_keys_and_says_how_to_find_the_older() -> None:
    ids = [f"{n:06x}aaaaaaaaaa" for n in range(MAX_LISTED_KEYS + 5)]
    line = recall_keys_line(ids)
    assert line.count(" ") < MAX_LISTED_KEYS + 20
    assert ids[-1][:6] in line and ids[4][:6] not in line and ids[5][:6] in line
    assert line.startswith("(recall ") and "; 5 older: recall a query)" in line
