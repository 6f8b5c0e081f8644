"""The work trail: what was done so far in a session, as probes a request must answer.

Issue 37's "artifact trail". After a policy's first compaction (the first request in which an
earlier message of the session is no longer verbatim), each request is probed for:
- **every file changed so far** (created, edited, deleted, moved onto): one probe per path;
- **the last command and its exit code** (when the output shows one);
- **the last test run and its result** (when a command was a test run);
- **the last error** (the last output holding an error line).

Everything is taken from the session's own messages, the same for every policy:
- *commands* are the `command` (or `cmd`) argument of a shell tool (`COMMAND_TOOLS`), the first
  line of a text action's last fenced block (the assistant message before an observation), and
  Aider's `/run`/`/test` user messages; the exit code is read from the output (`EXIT_CODE`);
- *files changed* come from editing tools (`EDIT_TOOLS`, `str_replace_editor`'s
  create/str_replace/insert/undo_edit), SWE-agent's `create FILE`/`edit`/`insert` (the file
  open at the time, from its `(Open file: …)` line), shell writes in any command (`> FILE`,
  `sed -i … FILE`, `tee`, `touch`, `rm`, `mv`, `cp`) and Aider's "Applied edit to FILE";
- a *test run* is a command matching `TEST_COMMAND`; its result is its exit code, else its
  output's summary (pytest counts, unittest's `OK`/`FAILED`, a traceback);
- an *error line* matches `ERROR_LINE` (an exception name, `error:`, `command not found`,
  `No such file or directory`); its probe text starts at the error word, 60 characters at most.

**A probe is hit** when the request still holds the messages it came from verbatim (the call
and its output), or its text form is in the request text (contents and call arguments):
- a file: its last two path components (`expr/match.c` for `/w/src/expr/match.c`), so a
  relative path counts; or an aggregate — a line holding `N file(s)` and `DIR/` for a
  directory the file is in ("src/: 14 files edited" answers for every file under a `src/`);
- the command: its first line (60 characters at most; also JSON-escaped) on a line that also
  says `exit …N` (or `rc`/`status`/`returncode`) with its code, the code unknown needing only
  the command;
- the test run: its summary counts ("2 failed, 10 passed") anywhere, or its command on a line
  with its outcome (`pass`/`ok`/`succeed` or `fail`/`error`, or the exit code as above);
- the error: its probe text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bench.sessions import PATH_KEYS, Session
from forge.llm.messages import Message

COMMAND_TOOLS = frozenset(
    {"execute_bash", "bash", "execute_command", "run_shell_command", "shell", "run_command"}
)
EDIT_TOOLS = frozenset(
    {
        "write_file",
        "edit_file",
        "create_file",
        "replace_in_file",
        "multi_edit",
        "write",
        "edit",
        "create",
        "insert",
        "apply_patch",
    }
)
"""Tools whose call changes the file its path argument names (or the open file)."""
EDITOR_WRITES = frozenset({"create", "str_replace", "insert", "undo_edit", "write"})
"""`str_replace_editor` commands that change a file."""
PROBE_CHARACTERS = 60
"""A command's or an error's probe text is at most this long."""
EXIT_CODE = re.compile(
    r"exit code[:\s]*(-?\d+)|<returncode>(-?\d+)</returncode>|exit status (-?\d+)"
    r"|\[Command finished with exit code (-?\d+)\]",
    re.IGNORECASE,
)
TEST_COMMAND = re.compile(
    r"\b(?:pytest|py\.test|unittest|tox|nox|jest|mocha|vitest|rspec|phpunit|ctest)\b"
    r"|\b(?:npm|yarn|pnpm)\s+(?:run\s+)?test\b"
    r"|\b(?:go|cargo|mvn|gradle|dotnet|mix|swift)\s+test\b"
    r"|\bmake\s+(?:test|check)\b|\btest_\w+\.py\b|\b\w+_test\.(?:py|go|rb)\b|^/test\b"
)
TEST_COUNTS = re.compile(r"\b\d+ (?:failed|passed|errors?|error)(?:, \d+ \w+)*")
ERROR_LINE = re.compile(
    r"\b(?:[A-Z]\w*(?:Error|Exception)\b:?.*|error(?:\[\w+\])?: .*|[\w.\-/ ]*command not found.*"
    r"|No such file or directory.*)"
)
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
_OPEN_FILE = re.compile(r"\(Open file: ([^)\n]+)\)")
_APPLIED = re.compile(r"^Applied edit to (\S+)", re.MULTILINE)
_SHELL_WRITES = re.compile(
    r"(?:>>?|\btee(?:\s+-a)?|\btouch|\brm(?:\s+-\w+)*|\bsed\s+-i(?:\S*)\s+(?:'[^']*'|\"[^\"]*\"|\S+))"
    r"\s+([\w./\-]+\.\w+|[\w.\-]*/[\w./\-]+)"
)
_MOVE = re.compile(r"\b(?:mv|cp)(?:\s+-\w+)*\s+\S+\s+([\w./\-]+)")
_AGGREGATE = re.compile(r"[^\n]*\b\d+ files?\b[^\n]*")
_DIRECTORY = re.compile(r"([\w.\-]+)/")
_PASSED = re.compile(r"\b(?:pass\w*|ok|succe\w*)\b", re.IGNORECASE)
_FAILED = re.compile(r"\b(?:fail\w*|errors?)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Command:
    """One command the session ran."""

    text: str
    """Its first line, at most `PROBE_CHARACTERS` characters."""
    exit_code: int | None
    sources: tuple[int, ...]
    """The messages holding the call and its output."""
    test: bool = False
    passed: bool | None = None
    """For a test run: its outcome (None when the output does not say)."""
    counts: str = ""
    """For a test run: its summary counts, e.g. "2 failed, 10 passed"."""


@dataclass(frozen=True)
class Probe:
    """One thing a request must still say; `hit` decides."""

    kind: str
    """`file`, `command`, `test` or `error`."""
    label: str
    sources: tuple[int, ...]
    check: Callable[[str, Sequence[str]], bool]
    """(request text, its aggregate lines) -> whether the text answers the probe."""


@dataclass
class TrailState:
    """The trail after some prefix of the session."""

    files: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Changed paths (in order of first change) with the messages that changed them last."""
    command: Command | None = None
    test: Command | None = None
    error: tuple[str, int] | None = None
    """The last error's probe text and the output holding it."""
    open_file: str = ""


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0][:PROBE_CHARACTERS] if lines else ""


def exit_code(output: str) -> int | None:
    """The exit code an output shows, if any (the last one)."""
    found = [m for m in EXIT_CODE.finditer(output)]
    if not found:
        return None
    return int(next(group for group in found[-1].groups() if group is not None))


def error_text(output: str) -> str:
    """The probe text of an output's last error line ("" when it has none)."""
    found = [m.group(0).strip() for m in ERROR_LINE.finditer(output)]
    return found[-1][:PROBE_CHARACTERS].strip() if found else ""


def run_outcome(output: str, code: int | None) -> tuple[bool | None, str]:
    """(passed, summary counts) of a test run's output."""
    counts = [m.group(0) for m in TEST_COUNTS.finditer(output)]
    summary = counts[-1] if counts else ""
    if code is not None:
        return code == 0, summary
    if summary:
        return not re.search(r"failed|error", summary), summary
    if re.search(r"^FAILED\b|Traceback \(most recent call last\)", output, re.MULTILINE):
        return False, ""
    if re.search(r"^OK\b", output, re.MULTILINE):
        return True, ""
    return None, ""


def _json_form(text: str) -> str:
    return json.dumps(text)[1:-1]


def _short_path(path: str) -> str:
    parts = [part for part in path.strip().rstrip("/").split("/") if part not in ("", ".")]
    return "/".join(parts[-2:])


def _directories(path: str) -> list[str]:
    parts = [part for part in path.strip().split("/") if part not in ("", ".")]
    return parts[:-1]


def _exit_said(line: str, code: int) -> bool:
    pattern = rf"(?:exit|rc|status|returncode|return code)\W{{0,12}}{code}(?!\d)"
    return re.search(pattern, line, re.IGNORECASE) is not None


def _lines_with(text: str, needle: str) -> list[str]:
    lines = []
    start = text.find(needle)
    while start != -1:
        begin = text.rfind("\n", 0, start) + 1
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        lines.append(text[begin:end])
        start = text.find(needle, end)
    return lines


def command_said(text: str, command: Command, outcome: re.Pattern[str] | None = None) -> bool:
    """Whether `text` names `command` on a line with its exit code (or `outcome`'s words)."""
    for form in dict.fromkeys((command.text, _json_form(command.text))):
        if not form or form not in text:
            continue
        if command.exit_code is None and outcome is None:
            return True
        for line in _lines_with(text, form):
            if command.exit_code is not None and _exit_said(line, command.exit_code):
                return True
            if outcome is not None and outcome.search(line.replace(form, " ")):
                return True
    return False


def file_said(text: str, aggregates: Sequence[str], path: str) -> bool:
    """Whether `text` names the changed file `path`, or an aggregate covers it."""
    short = _short_path(path)
    if short and short in text:
        return True
    directories = set(_directories(path))
    return any(name in directories for line in aggregates for name in _DIRECTORY.findall(line))


def aggregate_lines(text: str) -> list[str]:
    """The lines of `text` that count files ("src/: 14 files edited")."""
    return _AGGREGATE.findall(text) if " file" in text else []


class TrailBuilder:
    """Reads a session's messages in order and keeps its `TrailState`."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.state = TrailState()
        self._seen = 0
        self._pending: dict[str, tuple[int, str, bool]] = {}
        """call id -> (assistant index, command, is a command) awaiting its result."""
        self._action: tuple[int, str] | None = None

    def advance(self, end: int) -> TrailState:
        """The state after the session's first `end` messages."""
        for index in range(self._seen, end):
            self._read(index, self.session.messages[index])
        self._seen = max(self._seen, end)
        return self.state

    def _changed(self, path: str, sources: tuple[int, ...]) -> None:
        path = path.strip().strip("\"'")
        if path:
            path = self._known_as(path)
            self.state.files.pop(path, None)
            self.state.files[path] = sources

    def _known_as(self, path: str) -> str:
        """One file, one probe: a path already recorded under a shorter name that it ends with
        (`reproduce.py` created, then edited as the open file `/testbed/reproduce.py`) keeps
        the name the agent gave it first; a longer one recorded before gives way to it."""
        for known in self.state.files:
            if path.endswith("/" + known.lstrip("./")):
                return known
            if known.endswith("/" + path.lstrip("./")):
                self.state.files.pop(known)
                return path
        return path

    def _shell_writes(self, command: str, sources: tuple[int, ...]) -> None:
        for match in _SHELL_WRITES.finditer(command):
            self._changed(match.group(1), sources)
        for match in _MOVE.finditer(command):
            self._changed(match.group(1), sources)

    def _read(self, index: int, message: Message) -> None:
        session = self.session
        state = self.state
        for match in _APPLIED.finditer(message.content):
            self._changed(match.group(1), (index,))
        opened = _OPEN_FILE.findall(message.content)
        if opened and session.is_tool_output(index):
            state.open_file = opened[-1].strip()
        if message.role == "assistant":
            self._action = None
            for call in message.tool_calls:
                self._read_call(index, call.id, call.name, call.arguments)
            if not message.tool_calls and index + 1 in session.observations:
                blocks = _FENCE.findall(message.content)
                if blocks and "<<<<<<< SEARCH" not in blocks[-1]:
                    self._read_action(index, blocks[-1])
        elif message.role == "tool" and message.tool_call_id in self._pending:
            start, command, is_command = self._pending.pop(message.tool_call_id)
            if is_command:
                self._ran(command, message.content, (start, index))
        elif message.role == "user" and index in session.observations and self._action:
            start, command = self._action
            self._action = None
            self._ran(command, message.content, (start, index))
        elif message.role == "user" and re.match(r"/(?:run|test)\s", message.content):
            self._action = (index, message.content.split(None, 1)[1])

    def _read_call(self, index: int, call_id: str, name: str, arguments: str) -> None:
        try:
            parsed = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            parsed = {}
        if not isinstance(parsed, dict):
            parsed = {}
        path = next((parsed[k] for k in PATH_KEYS if isinstance(parsed.get(k), str)), None)
        command = parsed.get("command") or parsed.get("cmd")
        if name == "str_replace_editor":
            if command in EDITOR_WRITES and path:
                self._changed(path, (index,))
            return
        if name in EDIT_TOOLS:
            self._changed(path or self.state.open_file, (index,))
            if name == "create" and path:
                self.state.open_file = path
            return
        if name in ("open", "open_file") and path:
            self.state.open_file = path
        if name in COMMAND_TOOLS and isinstance(command, str):
            self._pending[call_id] = (index, command, True)
            self._shell_writes(command, (index,))

    def _read_action(self, index: int, block: str) -> None:
        words = block.split()
        if not words:
            return
        if words[0] == "create" and len(words) > 1:
            self._changed(words[1], (index,))
            self.state.open_file = words[1]
        elif words[0] in ("edit", "insert", "append") and self.state.open_file:
            self._changed(self.state.open_file, (index,))
        elif words[0] == "open" and len(words) > 1:
            self.state.open_file = words[1].strip("\"'")
        self._shell_writes(block, (index,))
        self._action = (index, block)

    def _ran(self, command: str, output: str, sources: tuple[int, ...]) -> None:
        code = exit_code(output)
        text = _first_line(command)
        if not text:
            return
        state = self.state
        if TEST_COMMAND.search(command):
            passed, counts = run_outcome(output, code)
            state.test = Command(text, code, sources, True, passed, counts)
        state.command = Command(text, code, sources)
        error = error_text(output)
        if error:
            state.error = (error, sources[-1])


def probes(state: TrailState) -> list[Probe]:
    """The probes a request must answer in this state."""
    result = [
        Probe(
            "file",
            path,
            sources,
            lambda text, aggregates, path=path: file_said(text, aggregates, path),
        )
        for path, sources in state.files.items()
    ]
    if state.command is not None:
        command = state.command
        result.append(
            Probe(
                "command",
                command.text,
                command.sources,
                lambda text, _, command=command: command_said(text, command),
            )
        )
    if state.test is not None:
        test = state.test
        words = None if test.passed is None else _PASSED if test.passed else _FAILED
        result.append(
            Probe(
                "test",
                test.text,
                test.sources,
                lambda text, _, test=test, words=words: (
                    bool(test.counts and test.counts in text) or command_said(text, test, words)
                ),
            )
        )
    if state.error is not None:
        error, source = state.error
        result.append(Probe("error", error, (source,), lambda text, _, error=error: error in text))
    return result
