"""The work ledger: what the session did, recorded from its own tool calls (no LLM).

A summary is written by a model and may drop a detail; users complain most that compaction
forgets *what was done*. The ledger cannot forget: it records, call by call, files read,
created, edited and deleted (with the lines added and removed), commands with their exit codes,
test runs with their result, errors met, and approaches abandoned (a change reverted, a command
that kept failing), each with the recall key of its output. `forge.context.ledger_pin` keeps it
in the prompt; `forge.context.ledger_render` renders it within its share of the budget. The
record is JSON-serializable (`to_meta`/`from_meta`), so a resumed session keeps it whole.
See docs/adr/0050-context-engine-v4.md.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from forge.context.ledger import command_of, exit_code_of
from forge.context.recall import RECALL_KEY_LENGTH, original_id
from forge.llm.messages import Message, ToolCall

_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "target_file")
_READ_WORDS = ("read", "view", "open", "cat")
_DELETE_WORDS = ("delete", "remove")
_CHANGE_WORDS = ("write", "edit", "create", "diff", "patch", "replace", "insert", "append")
_EDIT_PAIRS = (("old_str", "new_str"), ("old_string", "new_string"), ("search", "replace"))
TEST_COMMAND = re.compile(
    r"\b(pytest|py\.test|unittest|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|"
    r"(npm|yarn|pnpm|bun|go|cargo|mvn|gradle|dotnet|mix|deno) test|make (test|check))\b"
)
_TEST_COUNTS = re.compile(r"\b\d+ (passed|failed|errors?|skipped|tests? (passed|failed))\b", re.I)
_ERROR_LINE = re.compile(
    r"^\s*(\w+(Error|Exception)\b|error(\[\w+\])?:|fatal:|FAILED\b|E\s{2,}|panic:)", re.I
)
_ERROR_PHRASE = re.compile(r"No such file or directory|command not found|Permission denied", re.I)
"""What a shell says anywhere in a line when a command failed (`ls: cannot access 'x': No
such file or directory`)."""
_REDIRECT = re.compile(r"(?<![\d&>])>>?\s*([^\s;&|<>()'\"`]+)")
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
_REVERT_COMMAND = re.compile(
    r"\bgit\s+(checkout\s+(\S+\s+)?--\s+\S|checkout\s+\.(\s|$)|restore\b|reset\s+--hard"
    r"|revert\b|stash\b(?!\s+(list|show)))"
)
"""Commands that throw changes away (a branch switch, `git checkout main`, is not one)."""
KEPT_FAILING = 2
"""Failed runs in a row after which a command counts as abandoned (until it succeeds)."""
_TEXT_LIMIT = 120


@dataclass(slots=True)
class FileRecord:
    """What the session did to one file."""

    path: str
    read: bool = False
    created: bool = False
    edits: int = 0
    added: int = 0
    removed: int = 0
    deleted: bool = False
    reverted: bool = False
    order: int = 0
    """When it was last touched (the ledger's step counter): oldest are aggregated first."""

    @property
    def changed(self) -> bool:
        """Created, edited, deleted or reverted."""
        return self.created or self.edits > 0 or self.deleted or self.reverted


@dataclass(slots=True)
class CommandRun:
    """One command, its exit code (None: not stated), and for a test run its result."""

    command: str
    exit_code: int | None
    key: str = ""
    test: bool = False
    result: str = ""
    """For a test run: the counts line ("1 failed, 11 passed") when the output had one."""


@dataclass(slots=True)
class WorkLedger:
    """Everything recorded so far (see the module docstring)."""

    files: dict[str, FileRecord] = field(default_factory=dict)
    commands: list[CommandRun] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    abandoned: list[str] = field(default_factory=list)
    calls: set[str] = field(default_factory=set)
    """Ids of the calls recorded (each once, whatever rescans happen)."""
    step: int = 0
    _contents: dict[str, list[str]] = field(default_factory=dict)
    """Per path, digests of the whole contents written, in order (a return to an earlier
    one is a revert)."""
    _edits: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """Per path, digests of (old, new) of each edit (an edit undoing one is a revert)."""

    def is_empty(self) -> bool:
        """True when no call touched a file or ran a command."""
        return not (self.files or self.commands)

    # --- recording ----------------------------------------------------------------------
    def record(self, call: ToolCall, result: Message) -> None:
        """Record one finished call (once per call id)."""
        if call.id in self.calls:
            return
        self.calls.add(call.id)
        self.step += 1
        try:
            arguments = call.parsed_arguments()
        except ValueError:
            return
        failed = bool(result.meta.get("is_error"))
        command = command_of(call)
        if command is not None:
            self._command(command, result)
            return
        name = call.name.lower()
        paths = _paths(arguments)
        if failed:
            self._error(result.content, f"{call.name} {' '.join(paths)}".strip())
            return
        editor = str(arguments.get("command", "")).lower() if "editor" in name else ""
        if editor in ("view", "read", "open", "cat") or (
            not editor and _is(name, _READ_WORDS) and not _is(name, _CHANGE_WORDS)
        ):
            for path in paths:
                self._file(path).read = True
        elif _is(name, _DELETE_WORDS) and not _is(name, ("replace",)):
            for path in paths:
                self._file(path).deleted = True
        elif editor or _is(name, _CHANGE_WORDS):
            for path in paths[:1]:
                self._change(path, arguments, result)

    def _file(self, path: str) -> FileRecord:
        record = self.files.get(path)
        if record is None:
            record = self.files[path] = FileRecord(path)
        record.order = self.step
        return record

    def _change(self, path: str, arguments: dict[str, Any], result: Message) -> None:
        record = self._file(path)
        added, removed = _counts_in(result.content)
        content = _first_string(arguments, ("content", "file_text", "text"))
        pairs = _edit_pairs(arguments)
        if content is not None:
            digest = _digest(content)
            history = self._contents.setdefault(path, [])
            if history and digest in history[:-1] and digest != history[-1]:
                self._revert(record, "rewritten to an earlier version")
            history.append(digest)
            created = "created" in result.content.lower()[:40] or (
                not record.read and record.edits == 0 and not history[:-1]
            )
            if added is None:
                added, removed = content.count("\n") + bool(content), 0
            if created and not record.edits:
                record.created = True
            else:
                record.edits += 1
        else:
            digests = [(_digest(old), _digest(new)) for old, new in pairs]
            earlier = self._edits.setdefault(path, [])
            if digests and all((new, old) in earlier for old, new in digests):
                self._revert(record, "an edit undone")
            earlier.extend(digests)
            if added is None:
                added = sum(new.count("\n") + bool(new) for _, new in pairs)
                removed = sum(old.count("\n") + bool(old) for old, _ in pairs)
            record.edits += 1
        record.added += added or 0
        record.removed += removed or 0

    def _revert(self, record: FileRecord, how: str) -> None:
        record.reverted = True
        _append_once(self.abandoned, f"change to {record.path} reverted ({how})")

    def _command(self, command: str, result: Message) -> None:
        exit_code = exit_code_of(result)
        if exit_code is None and result.meta.get("is_error"):
            exit_code = -1
        text = " ".join(command.split())
        run = CommandRun(text, exit_code, key=original_id(result)[:RECALL_KEY_LENGTH])
        if TEST_COMMAND.search(text):
            run.test = True
            counts = [line for line in result.content.splitlines() if _TEST_COUNTS.search(line)]
            run.result = _clip(counts[-1].strip(" =")) if counts else ""
        self.commands.append(run)
        if exit_code not in (None, 0):
            self._error(result.content, f"`{_clip(text, 60)}`")
            streak = 0
            for earlier in reversed(self.commands):
                if earlier.command != text:
                    continue
                if earlier.exit_code in (None, 0):
                    break
                streak += 1
            if streak >= KEPT_FAILING:
                note = f"`{_clip(text, 80)}` kept failing"
                self.abandoned[:] = [a for a in self.abandoned if not a.startswith(note)]
                self.abandoned.append(f"{note} ({streak} runs, last exit {exit_code})")
        else:
            # An error a pipe or `|| true` hid from the exit code, or an output that states
            # none, is still an error met: recorded when a line says so plainly.
            self._error(result.content, f"`{_clip(text, 60)}`", plain_only=True)
            for path in _written_by(command):
                self._file(path).edits += 1
        if exit_code == 0:
            note = f"`{_clip(text, 80)}` kept failing"
            self.abandoned[:] = [a for a in self.abandoned if not a.startswith(note)]
        if _REVERT_COMMAND.search(text):
            for path in _command_paths(text):
                if path in self.files:
                    self.files[path].reverted = True
            _append_once(self.abandoned, f"changes reverted by `{_clip(text, 80)}`")
        for path in _deleted_by(text):
            self._file(path).deleted = True

    def _error(self, output: str, where: str, *, plain_only: bool = False) -> None:
        """Record the first error line of `output` (else, unless `plain_only`, its first
        line: a failed call's output is an error whatever it says)."""
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        found = next((line for line in lines if _is_error_line(line)), None)
        if found is None:
            if plain_only:
                return
            found = next((line for line in lines if not line.startswith("[exit")), "")
        if found:
            _append_once(self.errors, f"{_error_text(found)} ({where})")

    # --- persistence --------------------------------------------------------------------
    def to_meta(self) -> dict[str, Any]:
        """A JSON-serializable form (kept in the pinned ledger message's meta)."""
        return {
            "files": [_file_meta(record) for record in self.files.values()],
            "commands": [[c.command, c.exit_code, c.key, c.test, c.result] for c in self.commands],
            "errors": list(self.errors),
            "abandoned": list(self.abandoned),
            "calls": sorted(self.calls),
            "step": self.step,
        }

    @classmethod
    def from_meta(cls, data: Any) -> WorkLedger:
        """Rebuild a ledger written by `to_meta` (anything malformed is skipped)."""
        ledger = cls()
        if not isinstance(data, dict):
            return ledger
        for item in data.get("files") or ():
            if isinstance(item, list) and len(item) == 9 and isinstance(item[0], str):
                path, *flags = item
                ledger.files[path] = FileRecord(
                    path, bool(flags[0]), bool(flags[1]), int(flags[2]), int(flags[3]),
                    int(flags[4]), bool(flags[5]), bool(flags[6]), int(flags[7]),
                )  # fmt: skip
        for item in data.get("commands") or ():
            if isinstance(item, list) and len(item) == 5 and isinstance(item[0], str):
                code = item[1] if isinstance(item[1], int) else None
                ledger.commands.append(
                    CommandRun(item[0], code, str(item[2]), bool(item[3]), str(item[4]))
                )
        for name in ("errors", "abandoned"):
            values = data.get(name)
            if isinstance(values, list):
                getattr(ledger, name).extend(v for v in values if isinstance(v, str))
        calls = data.get("calls")
        if isinstance(calls, list):
            ledger.calls.update(c for c in calls if isinstance(c, str))
        step = data.get("step")
        ledger.step = step if isinstance(step, int) else len(ledger.calls)
        return ledger


def _file_meta(f: FileRecord) -> list[Any]:
    return [f.path, f.read, f.created, f.edits, f.added, f.removed, f.deleted, f.reverted, f.order]


def _is(name: str, words: tuple[str, ...]) -> bool:
    return any(word in name for word in words)


def _paths(arguments: dict[str, Any]) -> list[str]:
    found = [
        value.strip()
        for key in _PATH_KEYS
        if isinstance(value := arguments.get(key), str) and value.strip()
    ]
    listed = arguments.get("paths")
    if isinstance(listed, list):
        found.extend(item.strip() for item in listed if isinstance(item, str) and item.strip())
    return found


def _first_string(arguments: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str):
            return value
    return None


def _edit_pairs(arguments: dict[str, Any]) -> list[tuple[str, str]]:
    """(old, new) texts of an edit call: its own keys, or each of its `blocks`/`edits`."""
    items: list[dict[str, Any]] = [arguments]
    for key in ("blocks", "edits"):
        listed = arguments.get(key)
        if isinstance(listed, list):
            items.extend(item for item in listed if isinstance(item, dict))
    pairs: list[tuple[str, str]] = []
    for item in items:
        for old_key, new_key in _EDIT_PAIRS:
            old, new = item.get(old_key), item.get(new_key)
            if isinstance(old, str) and isinstance(new, str):
                pairs.append((old, new))
    return pairs


_COUNTS = re.compile(r"\(\S*?\+(\d+) -(\d+)\)|; \+(\d+) -(\d+)\)")


def _counts_in(text: str) -> tuple[int | None, int | None]:
    """Lines added and removed as Forge's write tools state them ("(+3 -1)")."""
    found = _COUNTS.search(text[:300])
    if found is None:
        return None, None
    values = [int(v) for v in found.groups() if v is not None]
    return values[0], values[1]


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _command_paths(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return [word for word in words if "/" in word or "." in word.strip(".")]


def _deleted_by(command: str) -> list[str]:
    """Paths an `rm` or `git rm` at the start of a command deletes."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    if words[:2] == ["git", "rm"]:
        words = words[1:]
    if not words or words[0] != "rm" or any(w in ("&&", ";", "|", "||") for w in words):
        return []
    return [word for word in words[1:] if not word.startswith("-")]


def _written_by(command: str) -> list[str]:
    """Paths a shell command writes: redirections (`> f`, `>> f`), `tee`, `sed -i`, `touch`
    and the target of `mv`/`cp`. A heredoc's body is data, so only lines up to its start."""
    head: list[str] = []
    for line in command.splitlines():
        head.append(line)
        if "<<" in line:
            break
    paths: list[str] = []
    for line in head:
        unquoted = _QUOTED.sub(" ", line)  # `sed 's/a -> b/c/'` redirects nothing
        paths += [target for target in _REDIRECT.findall(unquoted) if _looks_like_file(target)]
        for segment in re.split(r"&&|\|\||[;|]", line):
            try:
                words = shlex.split(segment)
            except ValueError:
                continue
            if words:
                paths += [word for word in _operands_written(words) if _looks_like_file(word)]
    return list(dict.fromkeys(paths))


def _operands_written(words: list[str]) -> list[str]:
    name, rest = words[0], words[1:]
    operands: list[str] = []
    if name == "sed" and any(w == "--in-place" or w.startswith("-i") for w in rest):
        script_given = skip = False
        for word in rest:
            if skip:
                skip = False
            elif word in ("-e", "-f", "--expression", "--file"):
                script_given = skip = True
            elif not word.startswith("-"):
                operands.append(word)
        return operands if script_given else operands[1:]
    operands = [word for word in rest if not word.startswith("-")]
    if name in ("tee", "touch"):
        return operands
    if name in ("mv", "cp") and len(operands) >= 2:
        return operands[-1:]
    return []


def _looks_like_file(word: str) -> bool:
    return (
        ("." in word.strip(".") or "/" in word)
        and any(c.isalpha() for c in word)
        and not word.startswith(("/dev/", "&", "-"))
    )


def _is_error_line(line: str) -> bool:
    return bool(_ERROR_LINE.match(line) or _ERROR_PHRASE.search(line))


def _error_text(line: str) -> str:
    """An error line within the ledger's limit, keeping the words that say what failed."""
    text = " ".join(line.split())
    phrase = _ERROR_PHRASE.search(text)
    if phrase and phrase.end() > _TEXT_LIMIT - 1:
        text = "…" + text[max(0, phrase.start() - 40) :]
    return _clip(text)


def fenced_action(text: str) -> str | None:
    """The command of a text action: the last fenced block of an assistant's reply."""
    blocks = _FENCE.findall(text)
    return blocks[-1].strip() or None if blocks else None


def _append_once(target: list[str], text: str) -> None:
    if text not in target:
        target.append(text)


def _clip(text: str, limit: int = _TEXT_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
