"""A deterministic ledger of what the agent did, built from the tool calls themselves.

Summaries are written by a model and may drop a detail; the ledger cannot. It lists files
read, files changed and commands run with their exit codes, taken from each call's arguments
(`ToolCall.parsed_arguments()`) and each result: the `exit_code` the agent keeps in the
result's meta when present, else the result's text ("[exit code N]", the line
`execute_command` ends with; also "exit code: N", "exit status N", ... matched leniently, the
last one wins, so a code the command itself printed earlier never hides the real one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from forge.llm.messages import Message, ToolCall

EXIT_CODE_PATTERN = re.compile(r"exit[ _-]?(?:code|status)\s*[:=]?\s*\(?(-?\d+)", re.IGNORECASE)

_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "target_file")
_COMMAND_KEYS = ("command", "cmd", "script")
_EDITOR_READ_COMMANDS = frozenset({"view", "read", "open", "cat"})
_READ_WORDS = ("read", "view", "open", "cat")
_CHANGE_WORDS = (
    "write",
    "edit",
    "create",
    "diff",
    "patch",
    "replace",
    "insert",
    "delete",
    "remove",
    "move",
    "rename",
    "append",
)
_COMMAND_WORDS = ("command", "bash", "shell", "exec", "terminal", "run")


@dataclass(frozen=True, slots=True)
class CommandRecord:
    """One command the agent ran and its exit code (None when the result did not say)."""

    command: str
    exit_code: int | None


@dataclass(slots=True)
class Ledger:
    """Files read, files changed and commands run, each in first-seen order."""

    files_read: list[str] = field(default_factory=list)
    files_changed: list[str] = field(default_factory=list)
    commands: list[CommandRecord] = field(default_factory=list)

    def is_empty(self) -> bool:
        """True when no tool call touched a file or ran a command."""
        return not (self.files_read or self.files_changed or self.commands)

    def merge(self, other: Ledger) -> None:
        """Add what `other` holds that this ledger does not."""
        _extend(self.files_read, other.files_read)
        _extend(self.files_changed, other.files_changed)
        for record in other.commands:
            if record not in self.commands:
                self.commands.append(record)

    def to_meta(self) -> dict[str, Any]:
        """A JSON-serializable form, kept in a summary message's meta so later summaries of
        that summary keep the ledger exact."""
        return {
            "files_read": list(self.files_read),
            "files_changed": list(self.files_changed),
            "commands": [[record.command, record.exit_code] for record in self.commands],
        }

    @classmethod
    def from_meta(cls, data: Any) -> Ledger:
        """Rebuild a ledger written by `to_meta` (anything malformed is skipped)."""
        ledger = cls()
        if not isinstance(data, dict):
            return ledger
        for key in ("files_read", "files_changed"):
            values = data.get(key)
            if isinstance(values, list):
                _extend(getattr(ledger, key), [v for v in values if isinstance(v, str)])
        for item in data.get("commands") or ():
            if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str):
                code = item[1] if isinstance(item[1], int) else None
                ledger.commands.append(CommandRecord(item[0], code))
        return ledger

    def render(self) -> str:
        """Markdown lines under a "Ledger" heading; "" when empty."""
        if self.is_empty():
            return ""
        lines = ["Ledger (from the tool calls):"]
        if self.files_read:
            lines.append("- files read: " + ", ".join(self.files_read))
        if self.files_changed:
            lines.append("- files changed: " + ", ".join(self.files_changed))
        for record in self.commands:
            status = "exit code unknown" if record.exit_code is None else f"exit {record.exit_code}"
            lines.append(f"- ran `{_one_line(record.command)}` ({status})")
        return "\n".join(lines)


def build_ledger(messages: Sequence[Message]) -> Ledger:
    """The ledger of every tool call in `messages` (results matched to calls by id)."""
    results = _results_by_call(messages)
    ledger = Ledger()
    for message in messages:
        for call in message.tool_calls:
            _record(ledger, call, results.get(call.id))
    return ledger


def collect_ledger(messages: Sequence[Message]) -> Ledger:
    """The ledger of the tool calls in `messages` plus the ledgers kept in the meta of earlier
    summaries among them, in order."""
    results = _results_by_call(messages)
    ledger = Ledger()
    for message in messages:
        if "ledger" in message.meta:
            ledger.merge(Ledger.from_meta(message.meta["ledger"]))
        for call in message.tool_calls:
            _record(ledger, call, results.get(call.id))
    return ledger


def _results_by_call(messages: Sequence[Message]) -> dict[str, Message]:
    return {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id}


def exit_code_of(result: Message) -> int | None:
    """A command result's exit code: the agent's `meta["exit_code"]`, else from its text."""
    recorded = result.meta.get("exit_code")
    if isinstance(recorded, int) and not isinstance(recorded, bool):
        return recorded
    return exit_code_in(result.content)


def exit_code_in(text: str) -> int | None:
    """The last exit code stated in a command's output, or None."""
    matches = EXIT_CODE_PATTERN.findall(text)
    return int(matches[-1]) if matches else None


def describe_call(call: ToolCall, limit: int = 160) -> str:
    """One line naming the tool and its arguments, shortened to about `limit` characters."""
    arguments = _one_line(call.arguments.strip() or "{}")
    if len(arguments) > limit:
        arguments = arguments[: limit - 1] + "…"
    return f"{call.name} {arguments}"


def key_arguments(call: ToolCall, limit: int = 100) -> str:
    """The tool and its argument values without the JSON around them ("read_file src/a.py 10
    40"): what a placeholder needs to name the call, in as few tokens as the values allow.
    Multi-line values (a file's content, a diff) become "…"; the whole is cut at `limit`
    characters. Arguments that are not a JSON object fall back to `describe_call`."""
    try:
        arguments = call.parsed_arguments()
    except ValueError:
        return describe_call(call, limit)
    values: list[str] = []
    for value in arguments.values():
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float):
            values.append(str(value))
        elif isinstance(value, str):
            values.append("…" if "\n" in value.strip() else _one_line(value))
        else:
            values.append(_one_line(json.dumps(value, ensure_ascii=False)))
    text = " ".join(values)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"{call.name} {text}".rstrip()


def command_of(call: ToolCall) -> str | None:
    """The shell command a call runs (`execute_command`, `bash`, ...), or None for other tools."""
    try:
        arguments = call.parsed_arguments()
    except ValueError:
        return None
    name = call.name.lower()
    if "editor" in name or not any(word in name for word in _COMMAND_WORDS):
        return None
    return _first_string(arguments, _COMMAND_KEYS)


def _record(ledger: Ledger, call: ToolCall, result: Message | None) -> None:
    try:
        arguments = call.parsed_arguments()
    except ValueError:
        return
    name = call.name.lower()
    paths = _paths(arguments)
    if "editor" in name:
        editor_command = str(arguments.get("command", "")).lower()
        target = ledger.files_read if editor_command in _EDITOR_READ_COMMANDS else None
        _extend(target if target is not None else ledger.files_changed, paths)
        return
    command = command_of(call)
    if command is not None:
        exit_code = exit_code_of(result) if result is not None else None
        ledger.commands.append(CommandRecord(command, exit_code))
        return
    if any(word in name for word in _CHANGE_WORDS):
        _extend(ledger.files_changed, paths)
    elif any(word in name for word in _READ_WORDS):
        _extend(ledger.files_read, paths)


def _paths(arguments: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            found.append(value.strip())
    value = arguments.get("paths")
    if isinstance(value, list):
        found.extend(item.strip() for item in value if isinstance(item, str) and item.strip())
    return found


def _first_string(arguments: dict[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _extend(target: list[str], paths: Sequence[str]) -> None:
    for path in paths:
        if path not in target:
            target.append(path)


def _one_line(text: str) -> str:
    return " ".join(text.split())
