"""The deterministic tiers and the manager's guarantees around them: the ingest cap, batched
observation masking, every user instruction kept, never a prompt above the budget, and an
overflow retry that is always smaller — against the loopback server."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

import pytest

from forge.agent.tools.read_file import numbered_lines
from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.errors import SummarizationSkipped
from forge.context.events import (
    ContextEvent,
    SummarizationCompleted,
    SummarizationStarted,
    Trigger,
)
from forge.context.groups import is_instruction
from forge.llm.messages import Message, MessageKind, assistant, user
from tests.context.builders import (
    conversation,
    counter,
    filler,
    group,
    make_manager,
    provider_for,
    task_start,
    words,
)
from tests.support.openai_server import Fault, OpenAIServer, Text


def tiers(**changes: Any) -> ContextSettings:
    """The default tiers with a budget small enough to matter."""
    values: dict[str, Any] = {"max_tokens": 100_000}
    values.update(changes)
    return ContextSettings(**values)


def numbered_file(lines: int) -> str:
    return "".join(f"{n:6}\t{words(12, 'line')}\n" for n in range(1, lines + 1))


def reads(count: int, size: int = 300, start: int = 0) -> list[Message]:
    messages: list[Message] = []
    for number in range(start, start + count):
        messages.extend(
            group(
                "read_file", words(size, f"r{number:02d}"), arguments={"path": f"src/f{number}.py"}
            )
        )
    return messages


def tool_outputs(chat: Conversation) -> list[Message]:
    return [m for m in chat.messages if m.role == "tool"]


# --- tier 0: the ingest cap ----------------------------------------------------------------
async def test_an_output_above_its_share_keeps_head_and_tail_and_says_how_to_read_the_rest(
    llm_server: OpenAIServer,
) -> None:
    events: list[ContextEvent] = []
    big = group("read_file", numbered_file(700), arguments={"path": "src/big.py"})
    chat = conversation(task_start(), big)
    async with provider_for(llm_server) as provider:
        settings = tiers(max_tokens=8000, ingest_max_share=0.25)
        manager = make_manager(provider, settings, events=events)
        await manager.evaluate_and_summarize(chat)
    cut = chat[-1]
    assert cut.role == "tool" and cut.tool_call_id == big[1].tool_call_id
    assert counter().count_message(cut) <= 0.25 * 8000
    assert cut.content.startswith(big[1].content[:200])  # the head, word for word
    assert cut.content.endswith(big[1].content[-200:])  # and the tail
    assert "elided to fit the context window" in cut.content
    assert "read_file start_line/end_line" in cut.content
    assert cut.meta["capped"] is True and cut.replaces == (big[1].id,)
    assert [s.strategy for s in events if isinstance(s, SummarizationStarted)] == ["ingest_cap"]
    assert llm_server.requests == []  # no LLM call
    assert chat.is_valid()


async def test_a_cut_read_file_output_names_the_file_lines_it_elided(
    llm_server: OpenAIServer,
) -> None:
    # read_file's output has a header line first and may have elided lines itself: the hint
    # must name the file's line numbers, not the output's.
    data = "".join(f"line {n} {words(12, 'w')}\n" for n in range(1, 3001)).encode()
    output = numbered_lines(data, "big.txt", None, None)
    assert output.elided  # read_file's own cap took lines out of the middle already
    big = group("read_file", output.text, arguments={"path": "big.txt"})
    chat = conversation(task_start(), big)
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(max_tokens=8000, ingest_max_share=0.25))
        await manager.evaluate_and_summarize(chat)
    cut = chat[-1].content
    head, _, tail = cut.partition("elided to fit the context window")
    shown = [int(n) for n in re.findall(r"^ *(\d+) \| ", cut, re.MULTILINE)]
    last_head = max(n for n in shown if f"{n:>4} | " in head)
    first_tail = min(n for n in shown if f"{n:>4} | " in tail)
    assert f"read_file start_line={last_head + 1} end_line={first_tail - 1}" in cut


async def test_outputs_within_the_cap_and_excluded_tools_outputs_are_never_cut(
    llm_server: OpenAIServer,
) -> None:
    small = group("read_file", words(1000), arguments={"path": "a.py"})
    excluded = group("ask_question", numbered_file(700), arguments={"question": "which?"})
    chat = conversation(task_start(), small, excluded)
    before = list(chat.messages)
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(max_tokens=30_000, observation_masking=False))
        assert counter().count_message(excluded[1]) > 0.25 * 30_000  # above the cap
        await manager.evaluate_and_summarize(chat)
    assert list(chat.messages[:4]) == before[:4]
    assert chat[-1] is before[-1]  # the excluded tool's answer stays whole


# --- tier 1: observation masking -------------------------------------------------------------
async def test_masking_waits_for_a_full_batch_then_masks_it_at_once(
    llm_server: OpenAIServer,
) -> None:
    settings = tiers(mask_keep_recent=3, mask_batch=4)
    chat = conversation(task_start())
    snapshots: list[tuple[str, ...]] = []
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, settings)
        for message in reads(10):
            chat.append(message)
            if message.role == "tool":
                await manager.evaluate_and_summarize(chat)
                snapshots.append(tuple(m.content for m in chat.messages))
    outputs = tool_outputs(chat)
    masked = [m for m in outputs if m.kind is MessageKind.PRUNED]
    # 7 outputs: 4 beyond the newest 3 -> one batch of 4; the 8th..10th wait for the next batch
    assert len(masked) == 4
    assert all(m.kind is MessageKind.NORMAL for m in outputs[-3:])  # newest 3 verbatim
    # the prompt's prefix changed once (at the batch), not on every call
    changed = sum(1 for earlier, later in pairwise(snapshots) if later[: len(earlier)] != earlier)
    assert changed == 1
    placeholder = masked[0]
    assert placeholder.content.startswith("[output masked to save context: read_file")
    assert "src/f0.py" in placeholder.content and "characters" in placeholder.content
    assert placeholder.meta["strategy"] == "masking"
    assert llm_server.requests == []
    assert chat.is_valid()


async def test_a_masked_command_keeps_its_exit_code(llm_server: OpenAIServer) -> None:
    command = group(
        "execute_command", words(300, "log") + "\n[exit code 2]", arguments={"command": "make"}
    )
    # A later run of the same command passes: the failing output is no longer kept (ADR 0038).
    passing = group(
        "execute_command", words(300, "ok") + "\n[exit code 0]", arguments={"command": "make"}
    )
    chat = conversation(task_start(), command, passing, reads(4))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(mask_keep_recent=3, mask_batch=1))
        await manager.evaluate_and_summarize(chat)
    placeholder = chat[3]
    assert placeholder.kind is MessageKind.PRUNED
    assert "make" in placeholder.content and "exit code 2" in placeholder.content
    assert placeholder.meta["exit_code"] == 2


async def test_under_pressure_masking_does_not_wait_for_a_batch(llm_server: OpenAIServer) -> None:
    chat = conversation(task_start(), reads(5, size=400))
    async with provider_for(llm_server) as provider:
        roomy = make_manager(provider, tiers(mask_keep_recent=3, mask_batch=6))
        await roomy.evaluate_and_summarize(chat)
        assert not any(m.kind is MessageKind.PRUNED for m in chat.messages)
        tight = make_manager(provider, tiers(max_tokens=2500, mask_keep_recent=3, mask_batch=6))
        await tight.evaluate_and_summarize(chat)
    assert sum(1 for m in chat.messages if m.kind is MessageKind.PRUNED) == 2


async def test_excluded_tools_and_small_outputs_are_never_masked(
    llm_server: OpenAIServer,
) -> None:
    question = group("ask_question", words(400, "ans"), arguments={"question": "which?"})
    tiny = group("list_files", "a.py\nb.py", arguments={"path": "."})
    chat = conversation(task_start(), question, tiny, reads(6))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(mask_keep_recent=3, mask_batch=1))
        await manager.evaluate_and_summarize(chat)
    assert chat[3] is question[1] and chat[5] is tiny[1]
    assert sum(1 for m in chat.messages if m.kind is MessageKind.PRUNED) == 3


async def test_with_llm_tool_call_summaries_on_masking_leaves_the_groups_to_them(
    llm_server: OpenAIServer,
) -> None:
    chat = conversation(task_start(), reads(8))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(tool_call_summaries=True, mask_batch=2))
        await manager.evaluate_and_summarize(chat)
    assert not any(m.kind is MessageKind.PRUNED for m in chat.messages)


async def test_user_role_observations_are_masked_as_outputs_not_kept_as_instructions(
    llm_server: OpenAIServer,
) -> None:
    outputs = [
        Message(role="user", content=words(300, f"o{n}"), kind=MessageKind.OBSERVATION)
        for n in range(6)
    ]
    parts: list[Message] = []
    for number, output in enumerate(outputs):
        parts += [assistant(f"running step {number}"), output]
    chat = conversation(task_start(), parts)
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(mask_keep_recent=3, mask_batch=3))
        await manager.evaluate_and_summarize(chat)
    masked = [m for m in chat.messages if m.kind is MessageKind.PRUNED]
    assert len(masked) == 3 and all(m.role == "user" for m in masked)
    assert masked[0].replaces == (outputs[0].id,) and "characters" in masked[0].content
    assert all(m in chat.messages for m in outputs[3:])  # the newest 3 stay
    assert not any(is_instruction(m) for m in outputs)
    assert chat.is_valid()


# --- user instructions -----------------------------------------------------------------------
@pytest.mark.parametrize("summarizer_works", [True, False])
async def test_every_user_instruction_survives_every_tier_and_the_fallback(
    llm_server: OpenAIServer, summarizer_works: bool
) -> None:
    llm_server.responder = lambda request: (
        Text("I did the work.") if summarizer_works else Fault(500, {"error": {"message": "x"}})
    )
    chat = conversation(task_start("Task 1: fix the parser " + words(100, "one")))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(max_tokens=3000, goal_batch_age=5))
        for number in range(2, 7):
            chat.append(user(f"Next task {number}: " + words(60, f"t{number}")))
            for message in [*reads(4, size=250, start=number * 10), assistant("Done.")]:
                chat.append(message)
                await manager.evaluate_and_summarize(chat)
                assert manager.current_tokens(chat) <= manager.max_tokens
    instructions = [m.content for m in chat.messages if is_instruction(m)]
    assert len(instructions) == 6
    assert instructions[0].startswith("Task 1: fix the parser")
    assert [text.split(":")[0] for text in instructions[1:]] == [
        f"Next task {n}" for n in range(2, 7)
    ]
    assert chat.is_valid()


async def test_instructions_above_their_share_are_condensed_oldest_first_and_never_dropped(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("Fix the parser in src/parse.py; keep the API.")
    first = user("Task 1: fix the parser in src/parse.py, keep the API. " + words(2000, "pst"))
    second = user("Task 2: add tests. " + words(300, "two"))
    latest = user("Task 3: " + words(1500, "thr"))
    chat = conversation(
        task_start()[:1], first, assistant("Done."), second, assistant("ok"), latest
    )
    events: list[ContextEvent] = []
    async with provider_for(llm_server) as provider:
        settings = tiers(max_tokens=5000, user_instruction_share=0.4)
        manager = make_manager(provider, settings, events=events)
        await manager.evaluate_and_summarize(chat)
        assert len(llm_server.requests) == 1  # only the oldest needed condensing
        await manager.evaluate_and_summarize(chat)
        assert len(llm_server.requests) == 1  # a condensed instruction is never condensed again
    condensed = chat[1]
    assert is_instruction(condensed) and condensed.meta["condensed"] is True
    assert condensed.replaces == (first.id,) and "src/parse.py" in condensed.content
    assert chat[3] is second and chat[5] is latest  # the others verbatim
    sent = llm_server.requests[0].text()
    assert "EVERY instruction" in sent
    assert [s.strategy for s in events if isinstance(s, SummarizationStarted)] == ["instructions"]


async def test_an_instruction_whose_condensing_fails_waits_and_stays_whole(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Fault(500, {"error": {"message": "down"}})
    first = user("Task 1: " + words(2500, "pst"))
    chat = conversation(task_start()[:1], first, assistant("Done."), user("Task 2: go on"))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(max_tokens=5000, summary_max_retries=0))
        for _ in range(3):
            await manager.evaluate_and_summarize(chat)
    assert chat[1] is first
    assert len(llm_server.requests) == 1  # not retried before every call


# --- the budget and overflows ----------------------------------------------------------------
async def test_the_prompt_never_stays_above_the_budget_when_the_newest_output_is_the_bulk(
    llm_server: OpenAIServer,
) -> None:
    # even with a generous ingest share, the newest output is cut so the request fits
    chat = conversation(task_start(), reads(2), group("read_file", numbered_file(700)))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(max_tokens=8000, ingest_max_share=1.0))
        assert manager.current_tokens(chat) > 8000
        await manager.evaluate_and_summarize(chat)
        assert manager.current_tokens(chat) <= 8000
    assert chat.is_valid()


async def test_an_overflow_always_shrinks_the_prompt_even_when_the_newest_output_is_the_bulk(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Fault(500, {"error": {"message": "down"}})
    events: list[ContextEvent] = []
    chat = conversation(task_start(), group("read_file", numbered_file(300)))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(max_tokens=8000), events=events)
        await manager.evaluate_and_summarize(chat)  # fits its own budget...
        before = manager.current_tokens(chat)
        assert before <= 8000
        await manager.compact(chat, trigger=Trigger.OVERFLOW)  # ...but the server's is smaller
        assert manager.current_tokens(chat) <= 0.75 * before
    completed = [e for e in events if isinstance(e, SummarizationCompleted)]
    assert any(e.strategy == "ingest_cap" and e.tokens_after < e.tokens_before for e in completed)
    assert chat.is_valid()


async def test_an_overflow_with_nothing_left_to_shrink_is_refused_not_resent(
    llm_server: OpenAIServer,
) -> None:
    chat = conversation(task_start("a long request " + words(3000)))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(max_tokens=8000))
        with pytest.raises(SummarizationSkipped, match="nothing could be shrunk"):
            await manager.compact(chat, trigger=Trigger.OVERFLOW)
    assert is_instruction(chat[1]) and chat[1].content.startswith("a long request")
    assert llm_server.requests == []


async def test_filler_is_not_needed_for_the_guarantees(llm_server: OpenAIServer) -> None:
    # a conversation of plain messages only: nothing to mask or cut, nothing breaks
    chat = conversation(task_start(), filler(30))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers())
        await manager.evaluate_and_summarize(chat)
    assert len(chat) == 32 and chat.is_valid()


async def test_summaries_on_the_main_model_are_sized_by_the_window_the_server_reported(
    llm_server: OpenAIServer,
) -> None:
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, tiers(), context_window=128_000)
        roomy = manager.summarizer.single_call_limit
        manager.set_provider(provider, context_window=2048)  # e.g. llama.cpp's n_ctx
        assert manager.summarizer.single_call_limit is not None and roomy is not None
        assert manager.summarizer.single_call_limit < 2048 < roomy
        manager.set_summarization_model("gpt-4o-mini")  # another model: sized by its own name
        assert manager.summarizer.single_call_limit > 2048
