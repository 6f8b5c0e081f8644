"""Bad hook definitions each give a warning naming the file and the field; the rest loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge.agent.hooks.config import (
    DEFAULT_TIMEOUT_SECONDS,
    read_hook_file,
    user_hooks,
)
from forge.agent.hooks.engine import Hooks
from forge.agent.hooks.events import HookEvent
from forge.agent.trust.gate import WorkspaceTrust
from forge.config.paths import config_path
from tests.agent.hooks.support import command_hook, write_user_hooks

GOOD = command_hook("echo good", matcher="Bash")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_malformed_json_names_line_and_column_and_other_files_still_load(
    workspace: Path,
) -> None:
    write(workspace / ".forge" / "hooks.json", '{\n  "hooks": {\n    "Stop": [,]\n  }\n}\n')
    write(
        workspace / ".claude" / "settings.json",
        json.dumps({"hooks": {"PreToolUse": [GOOD]}}),
    )
    result = write_user_hooks({"Stop": [command_hook("echo user")]})
    hooks = Hooks.load(result.settings, workspace, WorkspaceTrust(workspace, trusted_for_run=True))
    assert hooks.warnings == [
        ".forge/hooks.json:3:14: not valid JSON (Expecting value); its hooks are not loaded"
    ]
    assert hooks.active(HookEvent.PRE_TOOL_USE) and hooks.active(HookEvent.STOP)


def test_each_bad_entry_is_named_and_the_rest_of_the_file_loads(workspace: Path) -> None:
    definitions = {
        "PreToolUse": [
            GOOD,
            {"matcher": "Bash(", "hooks": [{"type": "command", "command": "echo a"}]},
            {"matcher": "Write", "hooks": [{"type": "prompt", "prompt": "is this ok?"}]},
            {"matcher": "Read", "hooks": [{"type": "command", "command": "echo t", "timeout": -5}]},
            {"matcher": "Grep", "hooks": [{"type": "command"}]},
            "not a group",
        ],
        "PreToolUse2": [GOOD],
        "Stop": {"matcher": ""},
    }
    path = write(workspace / ".forge" / "hooks.json", json.dumps({"hooks": definitions}))
    hook_file = read_hook_file(path, ".forge/hooks.json")
    where = ".forge/hooks.json: hooks."
    assert list(hook_file.warnings) == [
        f"{where}PreToolUse[1].matcher: invalid regex 'Bash(' (missing ), unterminated "
        "subpattern at position 4); this group is ignored",
        f"{where}PreToolUse[2].hooks[0].prompt: not a key Forge reads; ignored",
        f"{where}PreToolUse[2].hooks[0].type: 'prompt' is not supported (only \"command\"); "
        "ignored",
        f"{where}PreToolUse[3].hooks[0].timeout: -5 is not a positive number of seconds; the "
        "hook runs with the default 60 s",
        f"{where}PreToolUse[4].hooks[0].command: missing or empty; ignored",
        f"{where}PreToolUse[5]: must be an object with `matcher` and `hooks`; ignored",
        f"{where}PreToolUse2: unknown event (did you mean PreToolUse?); ignored. Events: "
        "PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SessionStart, "
        "SessionEnd, PreCompact, PostCompact, Notification, SubagentStop",
        f"{where}Stop: must be a list of matcher groups; ignored",
    ]
    commands = [(g.matcher, h.command, h.timeout) for g in hook_file.groups for h in g.commands]
    assert commands == [("Bash", "echo good", 60.0), ("Read", "echo t", DEFAULT_TIMEOUT_SECONDS)]


def test_a_file_that_is_not_an_object_or_whose_hooks_are_not_is_said(workspace: Path) -> None:
    listed = write(workspace / "a.json", "[1, 2]")
    assert read_hook_file(listed, "a.json").warnings == (
        "a.json: is not a JSON object; its hooks are not loaded",
    )
    wrong = write(workspace / "b.json", '{"hooks": []}')
    assert read_hook_file(wrong, "b.json").warnings == (
        "b.json: `hooks` is not an object; its hooks are not loaded",
    )
    none = write(workspace / "c.json", '{"permissions": {}}')
    assert read_hook_file(none, "c.json").warnings == ()


def test_user_config_hooks_are_checked_the_same_way() -> None:
    result = write_user_hooks(
        {
            "PreToolUse": [
                GOOD,
                {"matcher": "[", "hooks": [{"type": "command", "command": "echo x"}]},
            ],
            "PostToolUse": [{"hooks": [{"type": "command", "command": "fmt", "timeout": 0}]}],
        }
    )
    assert not result.problems
    hook_file = user_hooks(result.settings.hooks, str(config_path()))
    assert [warning.split(": ", 1)[1] for warning in hook_file.warnings] == [
        "hooks.PreToolUse[1].matcher: invalid regex '[' (unterminated character set at position "
        "0); this group is ignored",
        "hooks.PostToolUse[0].hooks[0].timeout: 0 is not a positive number of seconds; the hook "
        "runs with the default 60 s",
    ]
    assert all(warning.startswith(str(config_path())) for warning in hook_file.warnings)
    assert [group.event for group in hook_file.groups] == [
        HookEvent.PRE_TOOL_USE,
        HookEvent.POST_TOOL_USE,
    ]


def test_an_unknown_event_in_the_user_config_is_an_unknown_key_warning() -> None:
    result = write_user_hooks({"PreToolUze": [GOOD]})
    assert any(
        warning.key == "hooks.PreToolUze" and "did you mean hooks.PreToolUse" in str(warning)
        for warning in result.warnings
    ), result.warnings


def test_a_wrongly_typed_user_entry_is_a_config_problem_not_silence() -> None:
    result = write_user_hooks({"Stop": [{"hooks": [{"command": "x", "timeout": "soon"}]}]})
    assert any(problem.key and problem.key.startswith("hooks.Stop") for problem in result.problems)
    assert result.settings.hooks.Stop == []


def test_the_environment_can_turn_hooks_off(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORGE_HOOKS__DISABLED", "true")
    result = write_user_hooks({"Stop": [command_hook("echo x")]})
    hooks = Hooks.load(result.settings, workspace, WorkspaceTrust(workspace))
    assert hooks.disabled and not hooks.active(HookEvent.STOP)
