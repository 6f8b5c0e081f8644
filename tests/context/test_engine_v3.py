"""Context engine v3 (issue 23, ADR 0038) against the loopback server: the last resort spares
the newest three outputs, user instructions stay verbatim within half the budget, and masking
bookkeeping stays O(new) when masking fires."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.last_resort import cap_outputs_until
from forge.context.manager import Manager
from forge.context.strategies.ingest_cap import IngestCapStrategy
from forge.llm.messages import Message, MessageKind, assistant, user
from forge.llm.tokenizer import CharEstimateCounter, TiktokenCounter
from tests.context.builders import (
    conversation,
    counter,
    group,
    make_manager,
    provider_for,
    task_start,
    words,
)
from tests.support.openai_server import OpenAIServer, Text


def tiers(**changes: Any) -> ContextSettings:
    values: dict[str, Any] = {"max_tokens": 100_000}
    values.update(changes)
    return ContextSettings(**values)


def outputs(chat: Conversation) -> list[Message]:
    return [message for message in chat.messages if message.role == "tool"]


def test_the_last_resort_cuts_older_outputs_before_the_newest_three() -> None:
    # Six outputs of 1,200 tokens, each within its share (2,000 of 8,000): cutting the three
    # older ones is enough to reach the limit, so the newest three stay whole.
    reads = [
        group("read_file", words(1200, f"f{n}x"), arguments={"path": f"src/f{n}.py"})
        for n in range(6)
    ]
    chat = conversation(task_start(), *reads)
    originals = outputs(chat)
    exact = counter()
    limit = exact.count_messages(chat.messages) - 2000
    cap = IngestCapStrategy(tiers(max_tokens=8000), exact)
    cut = cap_outputs_until(
        chat,
        limit,
        cap,
        max_tokens=8000,
        excluded_tools=(),
        current=lambda c: exact.count_messages(c.messages),
    )
    assert cut and exact.count_messages(chat.messages) <= limit
    after = outputs(chat)
    assert after[-3:] == originals[-3:]  # the newest three word for word
    assert all(message.meta.get("capped") for message in after[:3])
    assert chat.is_valid()


async def test_instructions_within_half_the_budget_stay_verbatim_by_default(
    llm_server: OpenAIServer,
) -> None:
    # A pasted issue of 45 % of the budget (the 0.4 share of context engine v2 condensed it).
    llm_server.responder = lambda request: Text("condensed")
    pasted = user("Fix this issue:\n" + words(4500, "iss"))
    chat = conversation(task_start()[:1], pasted, assistant("On it."), user("go on"))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, ContextSettings(max_tokens=10_000))
        assert counter().count_message(pasted) > 0.4 * 10_000
        await manager.evaluate_and_summarize(chat)
    assert chat[1] is pasted
    assert llm_server.requests == []


class CountingCounter(CharEstimateCounter):
    """The exact test counter, counting how many messages it was asked to count."""

    def __init__(self) -> None:
        super().__init__(4)
        self.messages_counted = 0

    def count_message(self, message: Message) -> int:
        self.messages_counted += 1
        return super().count_message(message)


async def test_masking_runs_cost_o_new_not_o_conversation(llm_server: OpenAIServer) -> None:
    """Each call after masking fires counts a bounded number of messages, however long the
    conversation: no tier starts over because an output was masked in place."""
    settings = tiers(max_tokens=100_000_000, threshold_trigger=0.99, auto_summary_threshold=0.99)
    chat = conversation(task_start())
    for number in range(1500):
        # Small outputs: never worth masking, so every tier keeps judging them as outputs.
        for message in group("read_file", words(20, f"r{number % 97:02d}")):
            chat.append(message)
    tally = CountingCounter()
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, settings)
        manager.counter = tally
        for strategy in manager.strategies:
            if hasattr(strategy, "counter"):
                strategy.counter = tally
        await manager.evaluate_and_summarize(chat)  # the first look reads everything once
        counted: list[int] = []
        masked = 0
        for number in range(12):
            for message in group("read_file", words(250, f"n{number:02d}")):
                chat.append(message)
            tally.messages_counted = 0
            before = sum(m.kind is MessageKind.PRUNED for m in chat.messages)
            await manager.evaluate_and_summarize(chat)
            masked += sum(m.kind is MessageKind.PRUNED for m in chat.messages) - before
            counted.append(tally.messages_counted)
    assert masked >= 9  # masking fired in batches during the timed calls
    assert max(counted) < 100, counted  # not ~3,000: nothing rescanned the conversation


async def test_an_instruction_condensed_in_place_is_never_masked(
    llm_server: OpenAIServer,
) -> None:
    """Masking re-judges messages replaced in place, and only outputs are masked: a condensed
    user instruction stays a user message (a regression of the v3 bookkeeping)."""
    condensed = "Fix the parser; keep the API. " + words(300, "cnd")
    llm_server.responder = lambda request: Text(condensed)
    first = user("Task 1: fix the parser, keep the API. " + words(2000, "pst"))
    chat = conversation(task_start()[:1], first, assistant("Done."), user("Task 2: go on"))
    settings = tiers(max_tokens=5000, user_instruction_share=0.3)
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, settings)
        await manager.evaluate_and_summarize(chat)  # condenses the first instruction
        assert chat[1].meta.get("condensed") is True
        for number in range(6):
            for message in group("read_file", words(300, f"m{number}x")):
                chat.append(message)
            await manager.evaluate_and_summarize(chat)
    assert chat[1].role == "user" and chat[1].meta.get("condensed") is True
    assert any(m.kind is MessageKind.PRUNED for m in chat.messages)  # masking did run
    assert chat.is_valid()


async def test_masking_keeps_what_is_likely_needed_and_masks_superseded_outputs_first(
    llm_server: OpenAIServer,
) -> None:
    referred = group("read_file", words(200, "ref") + " parse_header", arguments={"path": "a.py"})
    failing = group(
        "execute_command", words(200, "err") + "\n[exit code 1]", arguments={"command": "pytest"}
    )
    stale = group("read_file", words(200, "old"), arguments={"path": "b.py"})
    chat = conversation(task_start(), referred, assistant("parse_header is the culprit"), failing)
    older = [group("read_file", words(200, f"n{n}x")) for n in range(3)]
    # b.py is among the newest three outputs, and is read again right after: masked anyway.
    for part in (*older, stale, group("read_file", words(200, "n3x"))):
        for message in part:
            chat.append(message)
    for message in group("read_file", words(200, "new"), arguments={"path": "b.py"}):
        chat.append(message)  # b.py read again: the earlier read is superseded
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(mask_keep_recent=3, mask_batch=1))
        await manager.evaluate_and_summarize(chat)
    by_id = {m.replaces[0] if m.replaces else m.id: m for m in chat.messages}
    assert by_id[referred[1].id] is referred[1]  # referred to since: kept
    assert by_id[failing[1].id] is failing[1]  # the latest failing run: kept
    assert by_id[stale[1].id].kind is MessageKind.PRUNED  # superseded: masked
    assert chat.is_valid()


async def test_a_cut_output_names_the_recall_id_of_its_uncut_original(
    llm_server: OpenAIServer,
) -> None:
    lines = "".join(f"{n:6}\tline {n} of the big file\n" for n in range(1, 1500))
    big = group("read_file", lines, arguments={"path": "src/big.py"})
    chat = conversation(task_start(), big)
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(max_tokens=8000))
        await manager.evaluate_and_summarize(chat)
    cut = chat[-1]
    assert cut.meta.get("capped") is True
    assert f"or recall {big[1].id[:6]} for all of it" in cut.content


async def test_an_output_barely_over_its_share_is_not_cut_on_arrival(
    llm_server: OpenAIServer,
) -> None:
    """A cut loses the output verbatim; one that would free less than masking's minimum
    saving is not made (a 6,013-token output at a 6,000-token share lost three referenced
    uses in the replay, ADR 0038 §8). Well over its share, an output is still cut."""
    settings = tiers(max_tokens=12_000, ingest_max_share=0.25)  # a share of 3,000 tokens
    exact = counter()
    near = group("read_file", words(3000 + 40, "near"), arguments={"path": "src/near.py"})
    far = group("read_file", words(3000 + 400, "far"), arguments={"path": "src/far.py"})
    assert 3000 < exact.count_message(near[1]) < 3000 + 100 < exact.count_message(far[1])
    chat = conversation(task_start(), near)
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, settings)
        await manager.evaluate_and_summarize(chat)
        assert chat[-1] is near[1]  # whole
        for message in far:
            chat.append(message)
        await manager.evaluate_and_summarize(chat)
    assert chat[-1].meta.get("capped") is True
    assert exact.count_message(chat[-1]) <= 3000
    assert llm_server.requests == []


class AheadCounter(TiktokenCounter):
    """The real counter, recording how many messages each `count_ahead` was handed."""

    def __init__(self) -> None:
        super().__init__("gpt-4o")
        self.handed: list[int] = []

    async def count_ahead(self, messages: Sequence[Message]) -> None:
        self.handed.append(len(messages))
        await super().count_ahead(messages)


async def test_the_count_ahead_before_each_call_is_handed_only_the_new_messages(
    llm_server: OpenAIServer,
) -> None:
    """Counting ahead off the loop (ADR 0036) looked at every message before every call:
    O(conversation), 40 x the floor at 20,000 messages. Now the first call hands everything,
    later ones what was appended or replaced in place since, and a summary (a change that
    moves messages) everything once more."""
    settings = tiers(max_tokens=100_000_000, mask_batch=3)
    chat = conversation(task_start())
    for number in range(1000):
        for message in group("read_file", words(20, f"r{number % 97:02d}")):
            chat.append(message)
    ahead = AheadCounter()
    async with provider_for(llm_server) as provider:
        manager = Manager(settings, provider, ahead, context_window=1_000_000_000)
        await manager.evaluate_and_summarize(chat)
        assert ahead.handed == [len(chat)]
        for number in range(6):
            for message in group("read_file", words(300, f"n{number:02d}")):
                chat.append(message)
            await manager.evaluate_and_summarize(chat)
        assert max(ahead.handed[1:]) <= 2 + 3  # two appended, at most a masked batch
        assert any(m.kind is MessageKind.PRUNED for m in chat.messages)  # masking did run
        chat.replace_range(2, 4, [assistant("[Summary of earlier work]")])
        await manager.evaluate_and_summarize(chat)
        assert ahead.handed[-1] == len(chat)  # moved messages: everything once
