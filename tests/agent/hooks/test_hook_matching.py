"""Matchers match Forge's and Claude Code's tool names; `tool_input` carries both spellings."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from forge.agent.hooks.events import HookEvent
from forge.agent.hooks.matching import (
    compile_matcher,
    forge_arguments,
    hook_tool_input,
    matches,
    tool_names,
)
from tests.agent.hooks.support import command_hook, session, user_hooks_engine


@pytest.mark.parametrize(
    ("matcher", "tool", "expected"),
    [
        ("Bash", "execute_command", True),
        ("execute_command", "execute_command", True),
        ("Write", "write_file", True),
        ("Edit|MultiEdit", "apply_diff", True),
        ("Read", "read_file", True),
        ("Glob", "list_files", True),
        ("Grep", "search_files", True),
        ("Write", "apply_diff", False),
        ("Bash", "write_file", False),
        ("Write", "NotebookWrite", False),  # plain names match exactly, as in Claude Code
        ("Notebook.*", "NotebookWrite", True),  # a regex is searched, as in Claude Code
        ("Bash|Write", "write_file", True),
        ("mcp__github", "github__create_issue", False),  # a plain prefix matches no tool
        ("mcp__.*", "github__create_issue", True),
        ("mcp__.*", "execute_command", False),
        ("", "anything", True),
        ("*", "anything", True),
        ("github__.*", "github__create_issue", True),
        ("mcp__github__.*", "github__create_issue", True),
        ("mcp__github__create_issue", "github__create_issue", True),
        ("mcp__gitlab__.*", "github__create_issue", False),
    ],
)
def test_matchers_know_both_names(matcher: str, tool: str, expected: bool) -> None:
    assert matches(compile_matcher(matcher), tool_names(tool)) is expected


def test_tool_input_adds_claude_keys(workspace: Path) -> None:
    root = workspace
    write = hook_tool_input("write_file", {"path": "src/a.py", "content": "x"}, root)
    assert write == {"path": "src/a.py", "content": "x", "file_path": str(root / "src/a.py")}
    edit = hook_tool_input(
        "apply_diff", {"path": "a.py", "blocks": [{"search": "old", "replace": "new"}]}, root
    )
    assert (edit["file_path"], edit["old_string"], edit["new_string"]) == (
        str(root / "a.py"),
        "old",
        "new",
    )
    assert edit["edits"] == [{"old_string": "old", "new_string": "new"}]
    read = hook_tool_input("read_file", {"path": "a.py", "start_line": 10, "end_line": 19}, root)
    assert (read["offset"], read["limit"]) == (10, 10)
    grep = hook_tool_input("search_files", {"regex": "TODO", "include": "*.py"}, root)
    assert (grep["pattern"], grep["glob"]) == ("TODO", "*.py")
    assert hook_tool_input("execute_command", {"command": "ls"}, root) == {"command": "ls"}


def test_rewritten_claude_keys_become_forge_arguments(workspace: Path) -> None:
    root = workspace
    edit = {"path": "a.py", "blocks": [{"search": "old", "replace": "new"}]}
    sent = hook_tool_input("apply_diff", edit, root)
    # A hook that echoes everything it got and changes only `new_string`.
    rewritten = forge_arguments("apply_diff", edit, {**sent, "new_string": "newer"}, root)
    assert rewritten == {"path": "a.py", "blocks": [{"search": "old", "replace": "newer"}]}
    grep = forge_arguments("search_files", {"regex": "a"}, {"pattern": "b", "glob": "*.md"}, root)
    assert grep == {"regex": "b", "include": "*.md"}
    outside = forge_arguments(
        "write_file", {"path": "a", "content": ""}, {"file_path": "/etc/x"}, root
    )
    assert outside["path"] == "/etc/x"  # left for the tool's own workspace check to refuse


async def test_claude_style_matchers_and_file_path_in_a_real_hook(workspace: Path) -> None:
    hooks = user_hooks_engine(
        workspace,
        {
            "PreToolUse": [
                command_hook(
                    f"{shlex.quote(sys.executable)} -c 'import json, sys; "
                    'print(json.load(sys.stdin)["tool_input"]["file_path"])\' > write.txt',
                    matcher="Write",
                ),
                command_hook("echo bash >> bash.txt", matcher="Bash"),
            ]
        },
    )
    await hooks.pre_tool_use(session(workspace), "write_file", {"path": "notes.md", "content": ""})
    assert (workspace / "write.txt").read_text().strip() == str(workspace / "notes.md")
    assert not (workspace / "bash.txt").exists()
    await hooks.pre_tool_use(session(workspace), "execute_command", {"command": "ls"})
    assert (workspace / "bash.txt").read_text() == "bash\n"
    assert not hooks.matching(HookEvent.PRE_TOOL_USE, {"forge_tool_name": "read_file"})
