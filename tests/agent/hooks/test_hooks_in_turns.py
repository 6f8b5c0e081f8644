"""Hooks at a session's and a turn's moments (issue 29, docs/adr/0043): every event's JSON from
a real session, Stop's capped re-entry, a blocked prompt, SessionStart's context, trust and
`hooks.disabled` — real hook processes, the loopback server as the model."""

from __future__ import annotations

from collections import deque
from pathlib import Path

from forge.agent.events import (
    HookBlocked,
    HookOutput,
    HookWarning,
    SummarizationStarted,
    ToolCallFinished,
    Trigger,
    TurnFinished,
)
from forge.agent.hooks.events import HookEvent
from forge.agent.trust.sources import workspace_sources
from tests.agent.hooks.support import command_hook, write_project_hooks
from tests.agent.hooks.turns_support import (
    drive,
    emit_json,
    hooked_session,
    recorded,
    recorder,
)
from tests.agent.loop_harness import finished, of_type
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

EVERY_EVENT = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "Stop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
]


async def test_each_event_fires_with_its_json_from_a_real_session(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "events.jsonl"
    session = hooked_session(
        llm_server, workspace, {event: [command_hook(recorder(log))] for event in EVERY_EVENT}
    )
    llm_server.enqueue(
        ToolCalls(
            [
                Call("write_file", {"path": "a.txt", "content": "hello"}, id="call-w"),
                Call("read_file", {"path": "missing.txt"}, id="call-r"),
            ]
        ),
        Text("all done"),
        Text("the summary of the conversation"),  # /compact's summarizer
    )
    try:
        await drive(session.start_hooks())
        events = await drive(session.run_turn("write a.txt please"))
        await drive(session.compact("keep the file names"))
        transcript = str(session.log.path)
        session_id = session.session_id
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"
    inputs = recorded(log)
    names = [i["hook_event_name"] for i in inputs]
    assert names[:2] == ["SessionStart", "UserPromptSubmit"]
    assert names[-1] == "SessionEnd"
    for event in EVERY_EVENT:
        assert event in names, event
    for data in inputs:
        assert data["session_id"] == session_id
        assert data["transcript_path"] == transcript
        assert data["cwd"] == str(workspace)
        assert data["permission_mode"] == "default"
    by_name = {}
    for data in inputs:
        by_name.setdefault(data["hook_event_name"], []).append(data)
    assert by_name["SessionStart"][0]["source"] == "startup"
    assert by_name["UserPromptSubmit"][0]["prompt"] == "write a.txt please"
    pre = by_name["PreToolUse"]
    assert [p["tool_name"] for p in pre] == ["Write", "Read"]
    assert pre[0]["tool_input"]["file_path"] == str(workspace / "a.txt")
    assert by_name["PostToolUse"][0]["tool_name"] == "Write"
    assert by_name["PostToolUse"][0]["tool_response"]
    assert "missing.txt" in by_name["PostToolUseFailure"][0]["error"]
    # The call's id, the same before and after it (issue 35), as Claude Code sends it.
    assert [p["tool_use_id"] for p in pre] == ["call-w", "call-r"]
    assert by_name["PostToolUse"][0]["tool_use_id"] == "call-w"
    assert by_name["PostToolUseFailure"][0]["tool_use_id"] == "call-r"
    notifications = [n["notification_type"] for n in by_name["Notification"]]
    assert notifications == ["permission_prompt", "idle_prompt"]
    [stop] = by_name["Stop"]
    assert stop["stop_hook_active"] is False
    assert stop["last_assistant_message"] == "all done"
    assert [c["trigger"] for c in by_name["PreCompact"]] == ["manual"]
    assert by_name["PreCompact"][0]["custom_instructions"] == "keep the file names"
    assert [c["trigger"] for c in by_name["PostCompact"]] == ["manual"]
    assert by_name["SessionEnd"][0]["reason"] == "exit"


async def test_a_blocking_stop_hook_makes_the_turn_go_on_at_most_three_times(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "stop.jsonl"
    keep_going = command_hook(f"{recorder(log)}; echo 'run the tests first' >&2; exit 2")
    session = hooked_session(llm_server, workspace, {"Stop": [keep_going]})
    llm_server.enqueue(Text("one"), Text("two"), Text("three"), Text("four"), Text("never"))
    try:
        events = await drive(session.run_turn("do it"))
    finally:
        await session.aclose()
    assert len(llm_server.requests) == 4
    second = llm_server.requests[1].messages
    assert second[-1]["role"] == "user"
    assert "run the tests first" in str(second[-1]["content"])
    assert [i["stop_hook_active"] for i in recorded(log)] == [False, True, True, True]
    assert [i["last_assistant_message"] for i in recorded(log)] == ["one", "two", "three", "four"]
    assert len(of_type(events, HookBlocked)) == 4
    assert "3 times" in of_type(events, HookWarning)[-1].text
    assert of_type(events, TurnFinished) == [TurnFinished("answered", "four")]


async def test_stop_runs_when_task_completion_ends_the_turn(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    once = command_hook(
        "if [ -f .stopped ]; then exit 0; fi; touch .stopped; echo 'not yet' >&2; exit 2"
    )
    session = hooked_session(llm_server, workspace, {"Stop": [once]})
    llm_server.enqueue(
        ToolCalls([Call("task_completion", {"result": "first try"})]),
        ToolCalls([Call("task_completion", {"result": "second try"})]),
    )
    try:
        events = await drive(session.run_turn("finish"))
    finally:
        await session.aclose()
    assert finished(events) == TurnFinished("completed", "second try")
    assert "not yet" in str(llm_server.requests[1].messages[-1]["content"])


async def test_a_blocked_prompt_is_not_sent_nor_kept(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    guard = command_hook(
        "grep -q password && { echo 'no secrets in prompts' >&2; exit 2; }; exit 0"
    )
    session = hooked_session(llm_server, workspace, {"UserPromptSubmit": [guard]})
    llm_server.enqueue(Text("hello back"))
    try:
        blocked = await drive(session.run_turn("my password is hunter2"))
        assert llm_server.requests == []
        assert not any("hunter2" in m.content for m in session.messages)
        events = await drive(session.run_turn("hello"))
    finally:
        await session.aclose()
    assert [b.reason for b in of_type(blocked, HookBlocked)] == ["no secrets in prompts"]
    assert finished(blocked) == TurnFinished("hook_blocked", "no secrets in prompts")
    assert finished(events).reason == "answered"
    assert "hunter2" not in llm_server.requests[0].text()


async def test_session_start_and_prompt_context_go_with_the_prompt(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    hooks = {
        "SessionStart": [command_hook("echo 'the build uses tabs'")],
        "UserPromptSubmit": [
            command_hook(
                emit_json(
                    {
                        "hookSpecificOutput": {
                            "hookEventName": "UserPromptSubmit",
                            "additionalContext": "ticket FORGE-7 is open",
                        }
                    }
                )
            )
        ],
    }
    session = hooked_session(llm_server, workspace, hooks)
    llm_server.enqueue(Text("one"), Text("two"))
    try:
        await drive(session.start_hooks())
        await drive(session.run_turn("first"))
        await drive(session.run_turn("second"))
    finally:
        await session.aclose()
    first = str(llm_server.requests[0].messages[-1]["content"])
    assert first.startswith("first")
    assert "the build uses tabs" in first and "ticket FORGE-7 is open" in first
    second = str(llm_server.requests[1].messages[-1]["content"])
    assert "the build uses tabs" not in second  # SessionStart's context goes once
    assert "ticket FORGE-7 is open" in second


async def test_a_resumed_session_starts_with_source_resume(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "start.jsonl"
    hooks = {"SessionStart": [command_hook(recorder(log))]}
    first = hooked_session(llm_server, workspace, hooks)
    llm_server.enqueue(Text("hi"))
    try:
        await drive(first.run_turn("hello"))
    finally:
        await first.aclose()
    resumed = hooked_session(llm_server, workspace, hooks, resume_latest=True)
    try:
        await drive(resumed.start_hooks())
    finally:
        await resumed.aclose()
    assert [i["source"] for i in recorded(log)] == ["resume"]


async def test_an_untrusted_project_hook_does_not_run_until_trusted_and_a_change_asks_again(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "project.jsonl"
    write_project_hooks(workspace, {"PreToolUse": [command_hook(recorder(log))]})
    session = hooked_session(llm_server, workspace, {}, mode="auto")
    llm_server.enqueue(
        ToolCalls([Call("read_file", {"path": ".forge/hooks.json"})]),
        Text("read"),
        ToolCalls([Call("read_file", {"path": ".forge/hooks.json"})]),
        Text("read again"),
    )
    try:
        warnings = await drive(session.start_hooks())
        await drive(session.run_turn("read it"))
        assert recorded(log) == []
        assert "not trusted" in session.reports.hooks()
        assert session.servers.trust is not None
        session.servers.trust.trust(workspace_sources(workspace))
        session.servers.reload_hooks()
        await drive(session.run_turn("read it again"))
    finally:
        await session.aclose()
    assert warnings == []  # trust is said by the trust dialog / forge run, not twice
    assert [i["tool_name"] for i in recorded(log)] == ["Read"]

    write_project_hooks(workspace, {"PreToolUse": [command_hook(recorder(log) + " # changed")]})
    changed = hooked_session(llm_server, workspace, {}, mode="auto")
    try:
        assert changed.servers.trust is not None
        assert changed.servers.trust.to_ask(workspace_sources(workspace))  # asks again
        assert not changed.agent.hooks or not changed.agent.hooks.active(HookEvent.PRE_TOOL_USE)
    finally:
        await changed.aclose()


async def test_hooks_disabled_runs_none(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "any.jsonl"
    hooks = {"PreToolUse": [command_hook(recorder(log))], "disabled": True}
    session = hooked_session(llm_server, workspace, hooks, mode="auto")
    llm_server.enqueue(ToolCalls([Call("read_file", {"path": "x"})]), Text("k"))
    try:
        events = await drive(session.run_turn("go"))
        report = session.reports.hooks()
    finally:
        await session.aclose()
    assert of_type(events, ToolCallFinished)
    assert recorded(log) == []
    assert "disabled" in report


async def test_no_hooks_runs_none(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "any.jsonl"
    hooks = {"UserPromptSubmit": [command_hook(recorder(log))]}
    session = hooked_session(llm_server, workspace, hooks, no_hooks=True)
    llm_server.enqueue(Text("k"))
    try:
        await drive(session.run_turn("go"))
    finally:
        await session.aclose()
    assert recorded(log) == []


async def test_settings_change_reloads_the_hooks(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "later.jsonl"
    session = hooked_session(llm_server, workspace, {})
    llm_server.enqueue(Text("one"), Text("two"))
    try:
        await drive(session.run_turn("first"))
        hooks = session.settings.hooks.model_validate(
            {"UserPromptSubmit": [command_hook(recorder(log))]}
        )
        said = session.apply_settings(session.settings.model_copy(update={"hooks": hooks}))
        await drive(session.run_turn("second"))
    finally:
        await session.aclose()
    assert "hooks" in said
    assert [i["prompt"] for i in recorded(log)] == ["second"]


async def test_a_hooks_file_problem_is_a_warning_and_the_other_hooks_run(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    hooks = {
        "PreToolUse": [{"matcher": "Bash(", "hooks": [{"type": "command", "command": "true"}]}],
        "UserPromptSubmit": [command_hook("echo hello from the hook")],
    }
    session = hooked_session(llm_server, workspace, hooks)
    llm_server.enqueue(Text("k"))
    try:
        warnings = await drive(session.start_hooks())
        events = await drive(session.run_turn("go"))
    finally:
        await session.aclose()
    [warning] = of_type(warnings, HookWarning)
    assert "invalid regex 'Bash('" in warning.text
    assert not of_type(events, HookOutput)  # UserPromptSubmit's text is context, not shown
    assert "hello from the hook" in llm_server.requests[0].text()


async def test_automatic_summarization_runs_pre_and_post_compact_with_trigger_auto(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "compact.jsonl"
    for number in range(1, 5):
        (workspace / f"data{number}.txt").write_text(f"line of file {number}\n" * 40)
    agent_replies = deque(
        [
            *(ToolCalls([Call("read_file", {"path": f"data{n}.txt"})]) for n in range(1, 5)),
            Text("All four files read."),
        ]
    )
    llm_server.responder = lambda request: (
        agent_replies.popleft() if request.tools else Text("summary: a file was read")
    )
    hooks = {
        "PreCompact": [command_hook(recorder(log))],
        "PostCompact": [command_hook(recorder(log))],
    }
    session = hooked_session(llm_server, workspace, hooks, mode="auto")
    context = session.settings.context.model_copy(
        update={
            "messages_old_threshold": 2,
            "min_tool_calls_to_summarize": 3,
            "max_concurrent_summaries": 1,
            "tool_call_summaries": True,
            "observation_masking": False,
        }
    )
    session.apply_settings(session.settings.model_copy(update={"context": context}))
    try:
        events = await drive(session.run_turn("read the data files"))
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"
    started = of_type(events, SummarizationStarted)
    assert started and all(event.trigger is Trigger.AUTO for event in started)
    inputs = recorded(log)
    assert [i["hook_event_name"] for i in inputs[:2]] == ["PreCompact", "PostCompact"]
    assert {i["trigger"] for i in inputs} == {"auto"}
    assert len(inputs) == 2 * len(started)
