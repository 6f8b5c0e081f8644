"""A skill's `allowed-tools`: which tool calls they pre-approve.

An entry is a tool name, Forge's (`execute_command`) or Claude Code's (`Bash`, `Read`, `Edit`,
`Write`, `Glob`, `Grep`), which approves every call of that tool, or a command pattern,
`Bash(git status:*)` / `Bash(git status)` / `execute_command(git status)`, which approves an
`execute_command` whose words start with the pattern's words and that holds no shell
metacharacter (the command allowlist's rule, `forge.agent.approvals`). MCP tools are named as
Forge names them (`server__tool`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

CLAUDE_TOOL_NAMES = {
    "bash": "execute_command",
    "read": "read_file",
    "write": "write_file",
    "edit": "apply_diff",
    "multiedit": "apply_diff",
    "glob": "list_files",
    "ls": "list_files",
    "grep": "search_files",
}
"""Claude Code's tool names (lower-cased) and the Forge tool each stands for."""

_PATTERN = re.compile(r"^([A-Za-z0-9_.-]+)\((.*)\)$")


def tool_name(entry_tool: str) -> str:
    """The Forge tool an entry's tool name stands for."""
    return CLAUDE_TOOL_NAMES.get(entry_tool.lower(), entry_tool)


def granted_tools(entries: Iterable[str]) -> frozenset[str]:
    """The tools the entries approve for every call (the entries without a pattern)."""
    return frozenset(tool_name(entry) for entry in entries if not _PATTERN.match(entry))


def command_prefixes(entries: Iterable[str]) -> list[str]:
    """The command prefixes of the `Bash(...)`/`execute_command(...)` entries, with Claude
    Code's `:*` suffix removed ("git status")."""
    prefixes = []
    for entry in entries:
        match = _PATTERN.match(entry)
        if match is None or tool_name(match.group(1)) != "execute_command":
            continue
        prefix = match.group(2).strip()
        for suffix in (":*", " *", "*"):
            if prefix.endswith(suffix):
                prefix = prefix[: -len(suffix)].strip()
                break
        if prefix:
            prefixes.append(prefix)
    return prefixes
