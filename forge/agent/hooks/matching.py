"""Which hooks a tool call matches, and the tool input a hook reads, in Forge's names and in
Claude Code's, so a hook written for Claude Code works unchanged (docs/adr/0043).

Matchers read as Claude Code reads them: one made only of letters, digits, `_` and `|` is a
list of exact names (`Bash` matches `Bash` only, `Edit|Write` either, `mcp__github` no tool);
any other is a regular expression found anywhere in the name (`mcp__github__.*` every tool of
that server, `Notebook.*`). A tool call is matched under every name it has: Forge's
(`execute_command`, `github__create_issue`) and Claude Code's (`Bash`,
`mcp__github__create_issue`). An empty matcher or `*` matches all.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MCP_SEPARATOR = "__"
"""Between an MCP server's name and its tool's in Forge's tool names (`server__tool`)."""

CLAUDE_NAMES: Mapping[str, tuple[str, ...]] = {
    "execute_command": ("Bash",),
    "write_file": ("Write",),
    "apply_diff": ("Edit", "MultiEdit"),
    "read_file": ("Read",),
    "list_files": ("Glob",),
    "search_files": ("Grep",),
}
"""Forge's tool → the names Claude Code gives the tool that does its job."""

MATCH_ALL = frozenset({"", "*"})
"""Matchers that match everything."""


_PLAIN_NAMES = re.compile(r"[A-Za-z0-9_|]+")


def compile_matcher(matcher: str) -> re.Pattern[str] | None:
    """The compiled matcher (use it with `search`), None for one that matches everything.
    Raises `re.error`."""
    text = matcher.strip()
    if text in MATCH_ALL:
        return None
    if _PLAIN_NAMES.fullmatch(text):
        names = [re.escape(name) for name in text.split("|") if name]
        return re.compile("^(?:" + "|".join(names) + ")$")
    return re.compile(text)


def tool_names(tool_name: str) -> tuple[str, ...]:
    """Every name `tool_name` (Forge's) answers to: its own, Claude Code's, and for an MCP
    tool `server__tool` also `mcp__server__tool`."""
    names = [tool_name, *CLAUDE_NAMES.get(tool_name, ())]
    if MCP_SEPARATOR in tool_name and tool_name not in CLAUDE_NAMES:
        names.append(f"mcp{MCP_SEPARATOR}{tool_name}")
    return tuple(names)


def matches(pattern: re.Pattern[str] | None, names: tuple[str, ...] | str) -> bool:
    """Whether `pattern` (from `compile_matcher`) matches one of `names`."""
    if pattern is None:
        return True
    candidates = (names,) if isinstance(names, str) else names
    return any(pattern.search(name) for name in candidates)


def claude_tool_name(tool_name: str) -> str:
    """The name Claude Code would give the tool (Forge's own when it has none)."""
    names = tool_names(tool_name)
    return names[1] if len(names) > 1 else tool_name


def hook_tool_input(
    tool_name: str, arguments: Mapping[str, Any], workspace: Path
) -> dict[str, Any]:
    """The `tool_input` a hook receives: Forge's arguments plus Claude Code's keys for them
    (`file_path` absolute as Claude gives it, `pattern`, `old_string`/`new_string`, …)."""
    tool_input = dict(arguments)
    path = arguments.get("path")
    if isinstance(path, str) and tool_name in ("write_file", "apply_diff", "read_file"):
        tool_input["file_path"] = _absolute(workspace, path)
    if tool_name == "apply_diff":
        edits = [
            {"old_string": block.get("search", ""), "new_string": block.get("replace", "")}
            for block in arguments.get("blocks") or []
            if isinstance(block, Mapping)
        ]
        tool_input["edits"] = edits
        if len(edits) == 1:
            tool_input.update(edits[0])
    elif tool_name == "read_file":
        start, end = arguments.get("start_line"), arguments.get("end_line")
        if isinstance(start, int):
            tool_input["offset"] = start
            if isinstance(end, int) and end >= start:
                tool_input["limit"] = end - start + 1
    elif tool_name == "list_files":
        tool_input["path"] = _absolute(workspace, path if isinstance(path, str) else ".")
        tool_input["pattern"] = "**/*" if arguments.get("recursive") else "*"
    elif tool_name == "search_files":
        tool_input["pattern"] = arguments.get("regex", "")
        if isinstance(path, str):
            tool_input["path"] = _absolute(workspace, path)
        if arguments.get("include"):
            tool_input["glob"] = arguments["include"]
    return tool_input


def forge_arguments(
    tool_name: str, arguments: Mapping[str, Any], updated: Mapping[str, Any], workspace: Path
) -> dict[str, Any]:
    """A hook's `updatedInput` as Forge's arguments for `tool_name`: merged over the call's
    `arguments`, Claude Code's keys translated back (a changed `file_path` becomes `path`,
    workspace-relative when inside the workspace). The caller still validates the result
    against the tool's argument model, as it does a model's call."""
    sent = hook_tool_input(tool_name, arguments, workspace)
    # Keys the hook echoed unchanged say nothing; only what it changed counts.
    changed = {key: value for key, value in updated.items() if sent.get(key, _MISSING) != value}
    result = dict(arguments)
    for key, value in changed.items():
        if key == "file_path" and isinstance(value, str):
            result["path"] = _relative(workspace, value)
        elif key in ("old_string", "new_string") and tool_name == "apply_diff":
            continue  # folded into `blocks` below
        elif key == "edits" and tool_name == "apply_diff" and isinstance(value, list):
            result["blocks"] = [
                {"search": edit.get("old_string", ""), "replace": edit.get("new_string", "")}
                for edit in value
                if isinstance(edit, Mapping)
            ]
        elif key == "pattern" and tool_name == "search_files":
            result["regex"] = value
        elif key == "glob" and tool_name == "search_files":
            result["include"] = value
        elif key == "path" and isinstance(value, str):
            result["path"] = _relative(workspace, value)
        elif key in ("offset", "limit", "pattern") and tool_name in ("read_file", "list_files"):
            continue  # no Forge twin worth guessing; the hook can set start_line/end_line
        else:
            result[key] = value
    if tool_name == "apply_diff" and ("old_string" in changed or "new_string" in changed):
        old = updated.get("old_string", sent.get("old_string", ""))
        new = updated.get("new_string", sent.get("new_string", ""))
        result["blocks"] = [{"search": old, "replace": new}]
    return result


_MISSING = object()


def _absolute(workspace: Path, path: str) -> str:
    return os.path.normpath(os.path.join(workspace, path))


def _relative(workspace: Path, path: str) -> str:
    """`path` relative to the workspace when it lies inside it, else as given (the tool's own
    workspace check then refuses it)."""
    if not os.path.isabs(path):
        return path
    relative = os.path.relpath(os.path.normpath(path), workspace)
    return path if relative == ".." or relative.startswith("../") else relative
