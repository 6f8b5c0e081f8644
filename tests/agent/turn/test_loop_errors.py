"""Provider errors in the loop: shown as events, the conversation stays valid, the session goes
on; a context overflow compacts and retries once."""

from __future__ import annotations

from pathlib import Path

from forge.agent.events import (
    ContextWarning,
    ErrorEvent,
    MessageDelta,
    SummarizationCompleted,
    SummarizationStarted,
    Trigger,
)
from forge.context.conversation import Conversation
from tests.agent.loop_harness import (
    KeepLastTurnContextManager,
    drive,
    finished,
    make_agent,
    make_provider,
    of_type,
    with_manager,
)
from tests.support.openai_server import Call, Disconnect, Fault, OpenAIServer, Text, ToolCalls

OVERFLOW = Fault(
    400,
    {
        "error": {
            "message": "This model's maximum context length is 8192 tokens.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    },
)


async def test_provider_error_is_an_event_and_a_later_turn_still_works(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        Fault(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}),
        Text("working now"),
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        failed = await drive(agent.run_turn("first"))
        assert agent.conversation.is_valid()
        recovered = await drive(agent.run_turn("second"))

    error = of_type(failed, ErrorEvent)[0]
    assert error.kind == "authentication" and error.fatal
    assert finished(failed).reason == "error"
    assert finished(recovered).reason == "answered"
    assert [m["content"] for m in llm_server.requests[-1].messages[1:]] == ["first", "second"]


async def test_a_stream_cut_mid_answer_keeps_the_partial_text(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Disconnect(Text("a long answer that breaks", chunk_size=4), after_chunks=3))
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("talk"))

    assert of_type(events, MessageDelta)
    assert of_type(events, ErrorEvent)[0].kind == "transport"
    assert finished(events).reason == "error"
    assert agent.conversation.is_valid()
    assert agent.conversation[-1].meta.get("partial") is True


async def test_an_error_after_tool_calls_leaves_a_valid_conversation(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a")
    llm_server.enqueue(
        ToolCalls([Call("read_file", {"path": "a.txt"})]),
        Fault(500, {"error": {"message": "boom"}}),
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("read"))

    assert of_type(events, ErrorEvent)[0].kind == "server_error"
    assert agent.conversation.is_valid()
    assert agent.conversation[-1].role == "tool"


async def test_context_overflow_compacts_and_retries_once(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("one"), Text("two"), OVERFLOW, Text("fits now"))
    async with make_provider(llm_server) as provider:
        agent, manager = with_manager(
            provider, workspace, lambda emit: KeepLastTurnContextManager(provider, emit=emit)
        )
        await drive(agent.run_turn("first"))
        await drive(agent.run_turn("second"))
        events = await drive(agent.run_turn("third"))

    assert manager.compactions == [Trigger.OVERFLOW]
    assert finished(events).reason == "answered"
    assert finished(events).final_text == "fits now"
    started = of_type(events, SummarizationStarted)
    assert started and started[0].trigger is Trigger.OVERFLOW
    assert of_type(events, SummarizationCompleted)
    retried = llm_server.requests[-1].messages
    assert retried[1]["content"].startswith("[summary of")
    assert retried[-1]["content"] == "third"


async def test_a_second_overflow_ends_the_turn_with_an_error(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(OVERFLOW, OVERFLOW, Text("later"))
    async with make_provider(llm_server) as provider:
        agent, manager = with_manager(
            provider, workspace, lambda emit: KeepLastTurnContextManager(provider, emit=emit)
        )
        events = await drive(agent.run_turn("huge"))
        later = await drive(agent.run_turn("small"))

    assert manager.compactions == [Trigger.OVERFLOW]
    assert of_type(events, ErrorEvent)[0].kind == "context_overflow"
    assert finished(events).reason == "error"
    assert finished(later).reason == "answered"


class WarningContextManager(KeepLastTurnContextManager):
    """Emits a warning from `evaluate_and_summarize` and from `record_usage`."""

    async def evaluate_and_summarize(self, conversation: Conversation) -> None:
        await super().evaluate_and_summarize(conversation)
        self.emit(ContextWarning(current_tokens=90, max_tokens=100, threshold=0.85))

    def record_usage(self, prompt_tokens: int, conversation: Conversation) -> None:
        super().record_usage(prompt_tokens, conversation)
        self.emit(ContextWarning(prompt_tokens, 100, 0.85))


async def test_context_events_are_yielded_in_order_within_the_turn(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("hello", prompt_tokens=42))
    async with make_provider(llm_server) as provider:
        agent, _ = with_manager(
            provider, workspace, lambda emit: WarningContextManager(provider, emit=emit)
        )
        events = await drive(agent.run_turn("hi"))

    kinds = [type(event).__name__ for event in events]
    assert kinds[0] == "ContextWarning"
    warnings = of_type(events, ContextWarning)
    assert [w.current_tokens for w in warnings] == [90, 42]
    assert kinds.index("MessageDelta") < kinds.index("UsageEvent") < len(kinds) - 2
    assert kinds[-2] == "ContextWarning" and kinds[-1] == "TurnFinished"


class FailingContextManager(KeepLastTurnContextManager):
    """`evaluate_and_summarize` fails the way a broken summarizer could."""

    async def evaluate_and_summarize(self, conversation: Conversation) -> None:
        await super().evaluate_and_summarize(conversation)
        raise RuntimeError("summarizer exploded")


async def test_a_failing_context_manager_is_reported_and_the_call_still_goes_out(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("answered anyway"))
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace, context_manager=FailingContextManager(provider))
        events = await drive(agent.run_turn("hi"))

    error = of_type(events, ErrorEvent)[0]
    assert error.message == "summarizer exploded" and error.kind == "internal"
    assert not error.fatal
    assert finished(events).reason == "answered"
    assert finished(events).final_text == "answered anyway"


async def test_an_overflow_whose_compaction_fails_ends_the_turn_and_the_session_goes_on(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    class BrokenCompaction(KeepLastTurnContextManager):
        async def compact(
            self,
            conversation: Conversation,
            instructions: str = "",
            trigger: Trigger = Trigger.MANUAL,
        ) -> None:
            raise RuntimeError("cannot compact")

    llm_server.enqueue(OVERFLOW, Text("later"))
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace, context_manager=BrokenCompaction(provider))
        events = await drive(agent.run_turn("huge"))
        later = await drive(agent.run_turn("small"))

    compaction_error, overflow_error = of_type(events, ErrorEvent)
    assert compaction_error.message == "cannot compact" and not compaction_error.fatal
    assert overflow_error.kind == "context_overflow" and overflow_error.fatal
    assert finished(events).reason == "error"
    assert agent.conversation.is_valid()
    assert finished(later).reason == "answered"
    assert len(llm_server.requests) == 2  # no retry without a successful compaction


async def test_an_unexpected_exception_ends_the_turn_with_a_fatal_internal_error(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    class BrokenUsage(KeepLastTurnContextManager):
        broken = True

        def record_usage(self, prompt_tokens: int, conversation: Conversation) -> None:
            if self.broken:
                raise KeyError("bug")

    llm_server.enqueue(ToolCalls([Call("list_files", {})]), Text("next turn works"))
    async with make_provider(llm_server) as provider:
        manager = BrokenUsage(provider)
        agent = make_agent(provider, workspace, context_manager=manager)
        events = await drive(agent.run_turn("list"))
        manager.broken = False
        later = await drive(agent.run_turn("again"))

    error = of_type(events, ErrorEvent)[0]
    assert error.kind == "internal" and error.fatal
    assert finished(events).reason == "error"
    assert agent.conversation.is_valid()
    assert finished(later).reason == "answered"
