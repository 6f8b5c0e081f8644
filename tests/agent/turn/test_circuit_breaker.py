"""The circuit breaker: identical consecutive errors only; a success or another error resets
it; rejections count, so a model that keeps retrying a forbidden call is stopped."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.agent.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalVerdict,
    ToolCallFinished,
)
from forge.agent.turn.circuit_breaker import DEFAULT_IDENTICAL_ERROR_LIMIT, CircuitBreaker
from tests.agent.loop_harness import drive, finished, make_agent, make_provider, of_type
from tests.support.openai_server import Call, OpenAIServer, ToolCalls


def test_trips_on_the_fifth_identical_error() -> None:
    breaker = CircuitBreaker()
    assert DEFAULT_IDENTICAL_ERROR_LIMIT == 5
    trips = [breaker.record("read_file", "no such file", is_error=True) for _ in range(5)]
    assert trips == [False, False, False, False, True]
    assert breaker.count == 5


def test_a_success_or_a_different_error_starts_the_count_again() -> None:
    breaker = CircuitBreaker()
    for _ in range(4):
        breaker.record("read_file", "no such file", is_error=True)
    assert not breaker.record("read_file", "1 | ok", is_error=False)
    assert breaker.count == 0
    for _ in range(4):
        breaker.record("read_file", "no such file", is_error=True)
    assert not breaker.record("read_file", "is a directory", is_error=True)
    assert breaker.count == 1
    # Same text from another tool is a different error too.
    assert not breaker.record("search_files", "is a directory", is_error=True)
    assert breaker.count == 1


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        CircuitBreaker(0)


async def test_repeated_rejections_end_the_turn(llm_server: OpenAIServer, workspace: Path) -> None:
    llm_server.responder = lambda request: ToolCalls(
        [Call("write_file", {"path": "x.txt", "content": "x"})]
    )

    def reject(request: ApprovalRequested) -> ApprovalDecision:
        return ApprovalDecision(ApprovalVerdict.REJECT, "never")

    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("write x"), approve=reject)

    assert finished(events).reason == "circuit_breaker"
    assert "5 identical errors from write_file" in finished(events).final_text
    assert len(of_type(events, ToolCallFinished)) == 5
    assert not (workspace / "x.txt").exists()
    assert agent.conversation.is_valid()


async def test_an_error_between_successes_never_trips(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "here.txt").write_text("here")
    paths = iter(["missing.txt", "here.txt"] * 5)
    llm_server.responder = lambda request: ToolCalls(
        [Call("read_file", {"path": next(paths, "here.txt")})]
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace, max_llm_calls=10)
        events = await drive(agent.run_turn("read"))

    assert finished(events).reason == "max_turns"
    assert sum(result.is_error for result in of_type(events, ToolCallFinished)) == 5
