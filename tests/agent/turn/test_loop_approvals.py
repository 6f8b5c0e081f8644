"""Approvals in the loop: approve once, approve always, reject with a reason, allowlist."""

from __future__ import annotations

from pathlib import Path

from forge.agent.approvals import ApprovalPolicy
from forge.agent.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalVerdict,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
)
from tests.agent.loop_harness import drive, finished, make_agent, make_provider, of_type
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


def two_writes() -> list[ToolCalls | Text]:
    return [
        ToolCalls([Call("write_file", {"path": "one.txt", "content": "1\n"})]),
        ToolCalls([Call("write_file", {"path": "two.txt", "content": "2\n"})]),
        Text("done"),
    ]


async def test_approve_once_asks_for_every_call(llm_server: OpenAIServer, workspace: Path) -> None:
    llm_server.enqueue(*two_writes())
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("write two files"))

    requests = of_type(events, ApprovalRequested)
    assert [r.call.name for r in requests] == ["write_file", "write_file"]
    assert "one.txt" in requests[0].summary
    assert (workspace / "one.txt").read_text() == "1\n"
    assert (workspace / "two.txt").read_text() == "2\n"
    # The request comes before the call starts.
    kinds = [type(event) for event in events]
    assert kinds.index(ApprovalRequested) < kinds.index(ToolCallStarted)


async def test_approve_always_stops_asking_for_that_tool(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(*two_writes())
    policy = ApprovalPolicy()
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace, policy=policy)
        events = await drive(
            agent.run_turn("write two files"),
            approve=lambda request: ApprovalDecision(ApprovalVerdict.APPROVE_ALWAYS),
        )

    assert len(of_type(events, ApprovalRequested)) == 1
    assert "write_file" in policy.approved_this_session
    assert (workspace / "two.txt").exists()


async def test_rejection_becomes_a_result_and_the_loop_goes_on(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "secret.txt", "content": "x"})]),
        ToolCalls([Call("task_completion", {"result": "left it alone"})]),
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(
            agent.run_turn("write it"),
            approve=lambda request: ApprovalDecision(ApprovalVerdict.REJECT, "not that file"),
        )

    assert not (workspace / "secret.txt").exists()
    result = of_type(events, ToolCallFinished)[0]
    assert result.result == "rejected by user: not that file"
    assert [event.call.name for event in of_type(events, ToolCallStarted)] == ["task_completion"]
    sent = [m for m in llm_server.requests[1].messages if m["role"] == "tool"]
    assert sent[-1]["content"] == "rejected by user: not that file"
    assert finished(events).reason == "completed"
    assert agent.conversation.is_valid()


async def test_a_dismissed_request_counts_as_a_rejection(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "x.txt", "content": "x"})]), Text("ok then")
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = []
        async for event in agent.run_turn("write it"):
            events.append(event)
            if isinstance(event, ApprovalRequested):
                event.future.cancel()

    assert not (workspace / "x.txt").exists()
    assert "dismissed" in of_type(events, ToolCallFinished)[0].result
    assert finished(events).reason == "answered"


async def test_allowlisted_commands_and_reads_run_without_asking(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a")
    llm_server.enqueue(
        ToolCalls(
            [
                Call("read_file", {"path": "a.txt"}),
                Call("execute_command", {"command": "echo hello"}),
            ]
        ),
        Text("done"),
    )
    policy = ApprovalPolicy(auto_approve=["read_file"], command_allowlist=["echo"])
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace, policy=policy)
        events = await drive(agent.run_turn("echo"))

    assert not of_type(events, ApprovalRequested)
    command = of_type(events, ToolCallFinished)[1]
    assert command.exit_code == 0 and "hello" in command.result
    streamed = "".join(
        e.text for e in of_type(events, ToolOutputDelta) if e.call_id == command.call.id
    )
    assert "hello" in streamed


async def test_a_call_refused_whatever_the_answer_is_not_put_to_the_user(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "existing.txt").write_text("the user's text\n")
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "existing.txt", "content": "overwritten\n"})]),
        ToolCalls(
            [
                Call(
                    "apply_diff",
                    {"path": "existing.txt", "blocks": [{"search": "nope", "replace": "x"}]},
                )
            ]
        ),
        Text("ok"),
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("change it"))

    assert not of_type(events, ApprovalRequested), "the read rule refuses these anyway"
    results = of_type(events, ToolCallFinished)
    assert [r.is_error for r in results] == [True, True]
    assert "has not been read" in results[0].result
    assert (workspace / "existing.txt").read_text() == "the user's text\n"
    assert agent.conversation.is_valid()
