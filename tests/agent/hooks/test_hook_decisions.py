"""What hooks say, read from real hook processes: exit codes, JSON, plain text, and several
hooks of one event aggregated (the first deny wins, then ask, then allow)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from forge.agent.hooks.decisions import (
    PostToolUseOutcome,
    PromptOutcome,
    StopContinuations,
    StopOutcome,
)
from forge.agent.hooks.events import HookEvent
from forge.agent.hooks.payloads import session_start_payload
from tests.agent.hooks.support import command_hook, session, user_hooks_engine


def emit(data: dict[str, Any]) -> str:
    """A hook command that prints `data` as JSON and exits 0."""
    return f"printf '%s' {shlex.quote(json.dumps(data))}"


def permission(decision: str, reason: str = "") -> str:
    return emit(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            }
        }
    )


async def test_exit_2_on_pre_tool_use_denies_with_stderr_for_the_model(workspace: Path) -> None:
    hooks = user_hooks_engine(
        workspace,
        {"PreToolUse": [command_hook("echo 'no writes to prod' >&2; exit 2", matcher="Write")]},
    )
    outcome = await hooks.pre_tool_use(
        session(workspace), "write_file", {"path": "prod.cfg", "content": "x"}
    )
    assert outcome.decision == "deny"
    assert outcome.reason == "no writes to prod"
    assert not outcome.warnings


async def test_updated_input_rewrites_the_command(workspace: Path) -> None:
    rewrite = emit(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"command": "rm -i old.txt"},
            }
        }
    )
    hooks = user_hooks_engine(workspace, {"PreToolUse": [command_hook(rewrite, matcher="Bash")]})
    outcome = await hooks.pre_tool_use(
        session(workspace), "execute_command", {"command": "rm old.txt", "timeout": 5}
    )
    assert outcome.decision == "allow"
    assert outcome.updated_input == {"command": "rm -i old.txt", "timeout": 5}


async def test_updated_file_path_comes_back_as_forges_relative_path(workspace: Path) -> None:
    target = workspace / "src" / "moved.py"
    rewrite = emit({"hookSpecificOutput": {"updatedInput": {"file_path": str(target)}}})
    hooks = user_hooks_engine(workspace, {"PreToolUse": [command_hook(rewrite, matcher="Write")]})
    outcome = await hooks.pre_tool_use(
        session(workspace), "write_file", {"path": "a.py", "content": "x = 1\n"}
    )
    assert outcome.updated_input == {"path": "src/moved.py", "content": "x = 1\n"}


async def test_two_rewrites_warn_and_the_first_in_config_order_wins(workspace: Path) -> None:
    first = emit({"hookSpecificOutput": {"updatedInput": {"command": "echo first"}}})
    second = emit({"hookSpecificOutput": {"updatedInput": {"command": "echo second"}}})
    hooks = user_hooks_engine(
        workspace, {"PreToolUse": [command_hook(first), command_hook(second, matcher="Bash")]}
    )
    outcome = await hooks.pre_tool_use(session(workspace), "execute_command", {"command": "x"})
    assert outcome.updated_input == {"command": "echo first"}
    (warning,) = outcome.warnings
    assert "several hooks rewrote the tool input" in warning
    assert "echo first" in warning and "echo second" in warning


async def test_deny_beats_ask_beats_allow_whatever_the_order(workspace: Path) -> None:
    hooks = user_hooks_engine(
        workspace,
        {
            "PreToolUse": [
                command_hook(permission("allow", "fine")),
                command_hook(permission("ask", "check this")),
                command_hook(permission("deny", "never on Fridays")),
            ]
        },
    )
    outcome = await hooks.pre_tool_use(session(workspace), "read_file", {"path": "a"})
    assert (outcome.decision, outcome.reason) == ("deny", "never on Fridays")

    hooks = user_hooks_engine(
        workspace,
        {
            "PreToolUse": [
                command_hook(permission("allow", "fine")),
                command_hook(permission("ask", "check this")),
            ]
        },
    )
    outcome = await hooks.pre_tool_use(session(workspace), "read_file", {"path": "a"})
    assert (outcome.decision, outcome.reason) == ("ask", "check this")


async def test_legacy_decision_block_denies(workspace: Path) -> None:
    hooks = user_hooks_engine(
        workspace, {"PreToolUse": [command_hook(emit({"decision": "block", "reason": "nope"}))]}
    )
    outcome = await hooks.pre_tool_use(session(workspace), "read_file", {"path": "a"})
    assert (outcome.decision, outcome.reason) == ("deny", "nope")


async def test_other_exit_codes_and_missing_commands_warn_and_let_the_action_proceed(
    workspace: Path,
) -> None:
    hooks = user_hooks_engine(
        workspace,
        {
            "PreToolUse": [
                command_hook("echo broken >&2; exit 1"),
                command_hook("./no-such-hook.sh"),
            ]
        },
    )
    outcome = await hooks.pre_tool_use(session(workspace), "read_file", {"path": "a"})
    assert outcome.decision is None
    assert len(outcome.warnings) == 2
    assert any("failed (exit 1): broken" in warning for warning in outcome.warnings)
    assert any(
        "no-such-hook.sh" in warning and "exit 127" in warning for warning in outcome.warnings
    )


async def test_plain_stdout_is_shown_and_json_adds_context_and_messages(workspace: Path) -> None:
    hooks = user_hooks_engine(
        workspace,
        {
            "PostToolUse": [
                command_hook("echo formatted a.py"),
                command_hook(
                    emit(
                        {
                            "systemMessage": "lint ran",
                            "hookSpecificOutput": {"additionalContext": "2 warnings in a.py"},
                        }
                    )
                ),
            ]
        },
    )
    outcome = await hooks.post_tool_use(
        session(workspace), "write_file", {"path": "a.py", "content": ""}, tool_response="ok"
    )
    assert isinstance(outcome, PostToolUseOutcome)
    assert outcome.context == "2 warnings in a.py"
    assert [message.text for message in outcome.messages] == ["formatted a.py", "lint ran"]
    assert outcome.messages[0].hook.endswith("config.yaml: echo formatted a.py")
    assert not outcome.blocked


async def test_exit_2_after_a_tool_gives_the_model_feedback(workspace: Path) -> None:
    hooks = user_hooks_engine(
        workspace, {"PostToolUseFailure": [command_hook("echo 'try --force' >&2; exit 2")]}
    )
    outcome = await hooks.post_tool_use(
        session(workspace), "execute_command", {"command": "git push"}, error="rejected"
    )
    assert outcome.event is HookEvent.POST_TOOL_USE_FAILURE
    assert (outcome.blocked, outcome.feedback) == (True, "try --force")


async def test_exit_2_on_a_prompt_keeps_it_from_the_model(workspace: Path) -> None:
    hooks = user_hooks_engine(
        workspace,
        {
            "UserPromptSubmit": [
                command_hook('grep -q password && { echo "no secrets" >&2; exit 2; }; exit 0')
            ]
        },
    )
    blocked = await hooks.user_prompt_submit(session(workspace), "my password is hunter2")
    assert isinstance(blocked, PromptOutcome)
    assert (blocked.blocked, blocked.reason) == (True, "no secrets")
    sent = await hooks.user_prompt_submit(session(workspace), "hello")
    assert not sent.blocked


async def test_plain_stdout_of_a_prompt_or_session_start_hook_is_context(workspace: Path) -> None:
    hooks = user_hooks_engine(
        workspace,
        {
            "UserPromptSubmit": [command_hook("echo 'branch: main'")],
            "SessionStart": [command_hook("echo 'open issues: 3'")],
        },
    )
    prompt = await hooks.user_prompt_submit(session(workspace), "hi")
    assert (prompt.context, prompt.messages) == ("branch: main", ())
    start = await hooks.run(
        HookEvent.SESSION_START, session_start_payload(session(workspace), "startup")
    )
    assert start.context == "open issues: 3"


async def test_continue_false_stops_with_its_reason(workspace: Path) -> None:
    hooks = user_hooks_engine(
        workspace,
        {"PostToolUse": [command_hook(emit({"continue": False, "stopReason": "build broke"}))]},
    )
    outcome = await hooks.post_tool_use(session(workspace), "read_file", {"path": "a"})
    assert (outcome.stop, outcome.stop_reason) == (True, "build broke")


async def test_stop_hook_blocks_at_most_three_times_a_turn(workspace: Path) -> None:
    hooks = user_hooks_engine(
        workspace,
        {"Stop": [command_hook("echo 'tests still fail' >&2; exit 2")]},
    )
    turn = StopContinuations()
    went_on = 0
    for _ in range(10):
        outcome = await hooks.stop(
            session(workspace), "done", stop_hook_active=turn.stop_hook_active
        )
        assert isinstance(outcome, StopOutcome)
        assert (outcome.go_on, outcome.reason) == (True, "tests still fail")
        if not turn.go_on(outcome):
            break
        went_on += 1
    assert went_on == 3
    assert turn.stop_hook_active
    assert not StopContinuations().stop_hook_active


async def test_a_non_executable_hook_warns_and_the_call_proceeds(workspace: Path) -> None:
    script = workspace / "guard.sh"
    script.write_text("#!/bin/sh\nexit 2\n")
    script.chmod(0o644)
    hooks = user_hooks_engine(workspace, {"PreToolUse": [command_hook("./guard.sh")]})
    outcome = await hooks.pre_tool_use(session(workspace), "read_file", {"path": "a"})
    assert outcome.decision is None
    (warning,) = outcome.warnings
    assert "./guard.sh failed (exit 126)" in warning and "Permission denied" in warning


async def test_an_unknown_permission_decision_is_a_warning(workspace: Path) -> None:
    hooks = user_hooks_engine(workspace, {"PreToolUse": [command_hook(permission("maybe"))]})
    outcome = await hooks.pre_tool_use(session(workspace), "read_file", {"path": "a"})
    assert outcome.decision is None
    (warning,) = outcome.warnings
    assert "permissionDecision 'maybe' is not allow, deny or ask" in warning


async def test_stdout_that_is_not_json_is_text_even_when_it_looks_close(workspace: Path) -> None:
    hooks = user_hooks_engine(workspace, {"PostToolUse": [command_hook("echo '{not json'")]})
    outcome = await hooks.post_tool_use(session(workspace), "read_file", {"path": "a"})
    assert [message.text for message in outcome.messages] == ["{not json"]
    assert not outcome.warnings
