"""Property tests: after every strategy, the fallback and whole manager evaluations, on random
conversations with tool-call groups, the list stays provider-valid and the protected messages
(system prompt, every user instruction, excluded tools' messages) stay."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.errors import SummarizationError
from forge.context.events import Trigger
from forge.context.fallback import apply_fallback_ladder
from forge.context.groups import is_instruction, latest_user_index, tool_call_groups
from forge.context.strategies import (
    GoalBatchCompactionStrategy,
    ThresholdSummarizationStrategy,
    ToolCallSummarizationStrategy,
)
from forge.llm.errors import LLMError
from forge.llm.messages import Message, MessageKind, ToolCall, assistant, system, tool_result, user
from tests.context.builders import counter, make_manager, provider_for, run_for, services
from tests.support.openai_server import Fault, OpenAIServer, RecordedRequest, Text

EXCLUDED = ["task_completion", "ask_question", "converse"]
TOOLS = ["read_file", "execute_command", "write_file", *EXCLUDED]
_ids = itertools.count()


@st.composite
def tool_group(draw: st.DrawFn) -> list[Message]:
    count = draw(st.integers(min_value=1, max_value=3))
    calls = tuple(
        ToolCall(
            f"c{next(_ids)}",
            draw(st.sampled_from(TOOLS)),
            json.dumps({"path": f"f{draw(st.integers(0, 9))}.py", "command": "make"}),
        )
        for _ in range(count)
    )
    text = draw(st.sampled_from(["", "let me look"]))
    size = draw(st.integers(min_value=1, max_value=900))
    results = [tool_result(call, "x" * size + "\nexit code: 0") for call in calls]
    return [assistant(text, calls), *results]


@st.composite
def item(draw: st.DrawFn) -> list[Message]:
    kind = draw(st.sampled_from(["group", "group", "group", "user", "text", "summary", "turn"]))
    if kind == "group":
        return draw(tool_group())
    if kind == "user":
        return [user("please " + "y" * draw(st.integers(1, 400)))]
    if kind == "text":
        return [assistant("thinking " + "z" * draw(st.integers(1, 400)))]
    summary = Message(role="assistant", content="I did things.", kind=MessageKind.SUMMARY)
    if kind == "summary":
        return [summary]
    request = user("an earlier request " + "q" * draw(st.integers(1, 1200)))
    return [request, summary]  # a complete turn


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    messages = [system("You are Forge."), user("the task")]
    for part in draw(st.lists(item(), min_size=5, max_size=40)):
        messages.extend(part)
    return messages


def protected(messages: list[Message]) -> list[Message]:
    kept = [messages[0], messages[1]]
    latest = latest_user_index(messages)
    if latest is not None:
        kept.append(messages[latest])
    kept.extend(m for m in messages if is_instruction(m))  # every user instruction
    for group in tool_call_groups(messages):
        if group.is_excluded(EXCLUDED):
            kept.extend(messages[group.start : group.end])
    return kept


def assert_invariants(chat: Conversation, original: list[Message]) -> None:
    assert chat.problems() == []
    present = set(map(id, chat.messages))
    condensed = {  # an instruction may only ever be condensed in place, never dropped
        replaced
        for message in chat.messages
        if is_instruction(message) and message.meta.get("condensed")
        for replaced in message.replaces
    }
    for message in protected(original):
        if is_instruction(message) and message.id in condensed:
            continue
        assert id(message) in present, message


def responder(fail_every: int):  # type: ignore[no-untyped-def]
    seen = itertools.count(1)

    def respond(request: RecordedRequest) -> Text | Fault:
        if fail_every and next(seen) % fail_every == 0:
            return Fault(500, {"error": {"message": "flaky"}})
        return Text("I did the work and kept notes.")

    return respond


PROPERTY_SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@settings(max_examples=300, deadline=None)
@given(original=conversations(), target=st.integers(0, 20_000), keep=st.integers(0, 30))
def test_fallback_ladder_keeps_the_invariants(
    original: list[Message], target: int, keep: int
) -> None:
    chat = Conversation(original)
    result = apply_fallback_ladder(
        chat, counter(), target_tokens=target, excluded_tools=EXCLUDED, keep_recent=keep
    )
    assert_invariants(chat, original)
    assert result.tokens_after <= result.tokens_before


@PROPERTY_SETTINGS
@given(
    original=conversations(),
    strategy_name=st.sampled_from(["tool_call", "threshold", "goal_batch"]),
    old=st.integers(1, 20),
    fail_every=st.integers(0, 3),
)
def test_every_strategy_keeps_the_invariants(
    llm_server: OpenAIServer,
    original: list[Message],
    strategy_name: str,
    old: int,
    fail_every: int,
) -> None:
    llm_server.reset()
    llm_server.responder = responder(fail_every)
    chosen_settings = ContextSettings(
        messages_old_threshold=old, goal_batch_age=old, goal_batch_min_turns=1
    )
    kinds: dict[
        str,
        type[
            ToolCallSummarizationStrategy
            | ThresholdSummarizationStrategy
            | GoalBatchCompactionStrategy
        ],
    ] = {
        "tool_call": ToolCallSummarizationStrategy,
        "threshold": ThresholdSummarizationStrategy,
        "goal_batch": GoalBatchCompactionStrategy,
    }
    strategy = kinds[strategy_name](services(chosen_settings))
    chat = Conversation(original)

    async def scenario() -> None:
        async with provider_for(llm_server) as provider:
            for _ in range(2):  # the second run meets what the first left (cooldowns too)
                with contextlib.suppress(LLMError, SummarizationError):
                    await strategy.run(chat, provider, run_for([]))
                assert_invariants(chat, original)

    asyncio.run(scenario())
    assert_invariants(chat, original)


@PROPERTY_SETTINGS
@given(
    original=conversations(),
    max_tokens=st.integers(200, 8000),
    old=st.integers(1, 20),
    fail_every=st.integers(0, 2),
    tool_call_summaries=st.booleans(),
    mask_batch=st.integers(1, 6),
)
def test_whole_evaluations_keep_the_invariants(
    llm_server: OpenAIServer,
    original: list[Message],
    max_tokens: int,
    old: int,
    fail_every: int,
    tool_call_summaries: bool,
    mask_batch: int,
) -> None:
    llm_server.reset()
    llm_server.responder = responder(fail_every)
    chosen_settings = ContextSettings(
        max_tokens=max_tokens,
        messages_old_threshold=old,
        min_tool_calls_to_summarize=2,
        goal_batch_age=old,
        tool_call_summaries=tool_call_summaries,
        mask_batch=mask_batch,
    )
    chat = Conversation(original)

    async def scenario() -> None:
        async with provider_for(llm_server) as provider:
            manager = make_manager(provider, chosen_settings)
            await manager.evaluate_and_summarize(chat)
            assert_invariants(chat, original)
            await manager.compact(chat, "keep paths")
            assert_invariants(chat, original)
            with contextlib.suppress(SummarizationError):  # nothing left to shrink
                await manager.compact(chat, trigger=Trigger.OVERFLOW)
            assert_invariants(chat, original)

    asyncio.run(scenario())
