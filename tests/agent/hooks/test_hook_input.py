"""Every event hands its hook the JSON Claude Code would, recorded by a real hook script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from forge.agent.hooks.engine import Hooks
from forge.agent.hooks.events import HookEvent
from forge.agent.hooks.payloads import (
    compact_payload,
    notification_payload,
    prompt_payload,
    session_end_payload,
    session_start_payload,
    stop_payload,
    tool_payload,
)
from tests.agent.hooks.support import command_hook, session, user_hooks_engine

RECORD = 'cat > "$FORGE_PROJECT_DIR/in-{event}.json"'


def recording_engine(workspace: Path) -> Hooks:
    return user_hooks_engine(
        workspace,
        {event.value: [command_hook(RECORD.format(event=event.value))] for event in HookEvent},
    )


def recorded(workspace: Path, event: HookEvent) -> dict[str, Any]:
    data = json.loads((workspace / f"in-{event.value}.json").read_text())
    assert isinstance(data, dict)
    return data


async def test_each_event_gets_the_common_fields_and_its_own(workspace: Path) -> None:
    hooks = recording_engine(workspace)
    s = session(workspace, mode="accept-edits")
    payloads = {
        HookEvent.PRE_TOOL_USE: tool_payload(
            s, HookEvent.PRE_TOOL_USE, "write_file", {"path": "a.txt", "content": "hi"}
        ),
        HookEvent.POST_TOOL_USE: tool_payload(
            s, HookEvent.POST_TOOL_USE, "execute_command", {"command": "ls"}, tool_response="x"
        ),
        HookEvent.POST_TOOL_USE_FAILURE: tool_payload(
            s, HookEvent.POST_TOOL_USE_FAILURE, "read_file", {"path": "b"}, error="no such file"
        ),
        HookEvent.USER_PROMPT_SUBMIT: prompt_payload(s, "fix the bug"),
        HookEvent.STOP: stop_payload(s, "done.", stop_hook_active=True),
        HookEvent.SUBAGENT_STOP: stop_payload(s, "sub done", stop_hook_active=False, subagent=True),
        HookEvent.SESSION_START: session_start_payload(s, "resume"),
        HookEvent.SESSION_END: session_end_payload(s, "exit"),
        HookEvent.PRE_COMPACT: compact_payload(s, "manual"),
        HookEvent.POST_COMPACT: compact_payload(s, "auto", after=True),
        HookEvent.NOTIFICATION: notification_payload(s, "approve?", "permission_prompt"),
    }
    for event, payload in payloads.items():
        assert hooks.active(event)
        outcome = await hooks.run(event, payload)
        assert outcome.ran and not outcome.warnings, outcome.warnings
    for event in HookEvent:
        data = recorded(workspace, event)
        assert data["hook_event_name"] == event.value
        assert data["session_id"] == "session-1"
        assert data["transcript_path"] == str(workspace / "session.jsonl")
        assert data["cwd"] == str(workspace)
        assert data["permission_mode"] == "acceptEdits"
        assert data["forge_permission_mode"] == "accept-edits"

    pre = recorded(workspace, HookEvent.PRE_TOOL_USE)
    assert pre["tool_name"] == "Write"
    assert pre["forge_tool_name"] == "write_file"
    assert pre["tool_input"]["path"] == "a.txt"
    assert pre["tool_input"]["file_path"] == str(workspace / "a.txt")
    assert pre["tool_input"]["content"] == "hi"
    post = recorded(workspace, HookEvent.POST_TOOL_USE)
    assert (post["tool_name"], post["tool_input"]["command"], post["tool_response"]) == (
        "Bash",
        "ls",
        "x",
    )
    assert recorded(workspace, HookEvent.POST_TOOL_USE_FAILURE)["error"] == "no such file"
    assert recorded(workspace, HookEvent.USER_PROMPT_SUBMIT)["prompt"] == "fix the bug"
    stop = recorded(workspace, HookEvent.STOP)
    assert (stop["stop_hook_active"], stop["last_assistant_message"]) == (True, "done.")
    assert recorded(workspace, HookEvent.SUBAGENT_STOP)["stop_hook_active"] is False
    assert recorded(workspace, HookEvent.SESSION_START)["source"] == "resume"
    assert recorded(workspace, HookEvent.SESSION_END)["reason"] == "exit"
    assert recorded(workspace, HookEvent.PRE_COMPACT)["trigger"] == "manual"
    assert recorded(workspace, HookEvent.POST_COMPACT)["trigger"] == "auto"
    note = recorded(workspace, HookEvent.NOTIFICATION)
    assert (note["message"], note["notification_type"]) == ("approve?", "permission_prompt")


async def test_hooks_run_in_the_workspace_with_the_project_dir_variables(workspace: Path) -> None:
    hooks = user_hooks_engine(
        workspace,
        {
            "Stop": [
                command_hook(
                    'pwd > where.txt; echo "$CLAUDE_PROJECT_DIR|$FORGE_PROJECT_DIR" > dirs.txt'
                )
            ]
        },
    )
    await hooks.stop(session(workspace), "ok", stop_hook_active=False)
    root = str(workspace)
    assert (workspace / "where.txt").read_text().strip() == root
    assert (workspace / "dirs.txt").read_text().strip() == f"{root}|{root}"


@pytest.mark.parametrize(
    ("source", "matcher", "runs"),
    [("startup", "startup", True), ("clear", "startup|resume", False), ("resume", "", True)],
)
async def test_session_start_matches_its_source(
    workspace: Path, source: str, matcher: str, runs: bool
) -> None:
    hooks = user_hooks_engine(
        workspace, {"SessionStart": [command_hook("echo ran > ran.txt", matcher=matcher)]}
    )
    await hooks.run(HookEvent.SESSION_START, session_start_payload(session(workspace), source))  # type: ignore[arg-type]
    assert (workspace / "ran.txt").exists() is runs
