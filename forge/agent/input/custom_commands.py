"""Custom slash commands: Markdown files whose body becomes the user message.

`.forge/commands/` in the workspace (project) and `$XDG_CONFIG_HOME/forge/commands/` (user)
hold `NAME.md` files; a subfolder namespaces them (`git/review.md` is `/git:review`). Optional
YAML front matter gives a `description`, an `argument-hint` and a `model` for that one turn.
`$ARGUMENTS` in the body is replaced by everything typed after the name, `$1`, `$2`, … by the
arguments split like a shell would. Used by the TUI and `forge run` alike; see
docs/adr/0026-custom-slash-commands.md.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

APP_DIRECTORY_NAME = "forge"
"""As `forge.config.paths.APP_DIRECTORY_NAME`; not imported, so the TUI's first frame does
not wait for `forge.config` (pydantic) through this module."""
COMMANDS_DIRECTORY_NAME = "commands"
MAX_FILE_BYTES = 256 * 1024
"""The default of `commands.max_file_bytes`: a larger command file is refused, by name (a
10 MB file once went to the model whole, without a word; docs/adr/0036)."""
_NAME_PART = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|\d+)")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)


def project_commands_dir(workspace: Path) -> Path:
    """The project's commands: `<workspace>/.forge/commands`."""
    return workspace / ".forge" / COMMANDS_DIRECTORY_NAME


def user_commands_dir() -> Path:
    """The user's commands: `$XDG_CONFIG_HOME/forge/commands` (default `~/.config/...`).

    Like every XDG variable, a relative `$XDG_CONFIG_HOME` is ignored.
    """
    value = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(value) if value and os.path.isabs(value) else Path.home() / ".config"
    return base / APP_DIRECTORY_NAME / COMMANDS_DIRECTORY_NAME


@dataclass(frozen=True, slots=True)
class CustomCommand:
    """One command file: its name (without "/", e.g. "git:review"), body and front matter."""

    name: str
    body: str
    path: Path
    scope: str
    """"project" or "user"."""
    description: str = ""
    argument_hint: str = ""
    model: str = ""
    """The model for the turn this command starts; empty for the session's model."""

    @property
    def takes_arguments(self) -> bool:
        """The body has `$ARGUMENTS` or `$1`, `$2`, … (or the front matter an argument hint)."""
        return bool(self.argument_hint) or _PLACEHOLDER.search(self.body) is not None

    @property
    def summary(self) -> str:
        """One line for help and completion: the description, else the body's first line."""
        if self.description:
            return self.description
        first = next((line.strip() for line in self.body.splitlines() if line.strip()), "")
        return first if len(first) <= 60 else first[:59] + "…"

    def expand(self, arguments: str) -> str:
        """The body with `$ARGUMENTS` and `$1`, `$2`, … replaced by `arguments`.

        Positional arguments are split like a shell would (quotes group words); a missing one
        becomes empty. A body without any placeholder gets the arguments appended after a
        blank line, so nothing typed is lost.
        """
        arguments = arguments.strip()
        try:
            positional = shlex.split(arguments)
        except ValueError:  # an unbalanced quote: split on whitespace instead
            positional = arguments.split()

        def replace(match: re.Match[str]) -> str:
            key = match.group(1)
            if key == "ARGUMENTS":
                return arguments
            index = int(key)
            return positional[index - 1] if 0 < index <= len(positional) else ""

        body = self.body.strip("\n")
        if _PLACEHOLDER.search(body) is None:
            return f"{body}\n\n{arguments}" if arguments else body
        return _PLACEHOLDER.sub(replace, body)


@dataclass(slots=True)
class CustomCommands:
    """The loaded commands by name, and one line per file that could not be used."""

    commands: dict[str, CustomCommand] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> CustomCommand | None:
        """The command called `name` (without "/"), if any."""
        return self.commands.get(name.lower())

    def expand_input(self, text: str) -> tuple[CustomCommand, str] | None:
        """When `text` is "/name args" for a loaded command: it and the expanded message."""
        stripped = text.strip()
        if not stripped.startswith("/") or stripped.startswith("//"):
            return None
        head, _, arguments = stripped[1:].partition(" ")
        command = self.get(head.strip())
        if command is None:
            return None
        return command, command.expand(arguments)


def load_custom_commands(
    workspace: Path,
    *,
    user_dir: Path | None = None,
    reserved: Iterable[str] = (),
    max_file_bytes: int = MAX_FILE_BYTES,
) -> CustomCommands:
    """Read the project's and the user's command files; never raises.

    A project command wins over a user command of the same name; a name in `reserved` (the
    built-in commands) is skipped and reported, as is an unreadable or malformed file, or one
    larger than `max_file_bytes`.
    """
    result = CustomCommands()
    reserved_names = {name.lower() for name in reserved}
    user = user_dir if user_dir is not None else user_commands_dir()
    for scope, directory in (("user", user), ("project", project_commands_dir(workspace))):
        for command in _read_directory(directory, scope, result.problems, max_file_bytes):
            if command.name in reserved_names:
                result.problems.append(
                    f"{command.path}: /{command.name} is a built-in command; the built-in wins"
                )
                continue
            result.commands[command.name] = command  # project (read last) wins over user
    return result


def _read_directory(
    directory: Path, scope: str, problems: list[str], max_file_bytes: int
) -> list[CustomCommand]:
    try:
        if not directory.is_dir():
            return []
        paths = sorted(directory.rglob("*.md"))
    except OSError as error:
        problems.append(f"{directory}: cannot list the commands: {error.strerror or error}")
        return []
    commands = []
    for path in paths:
        try:
            command = read_command_file(path, directory, scope, max_file_bytes)
        except CommandFileError as error:
            problems.append(str(error))
            continue
        if command is not None:
            commands.append(command)
    return commands


class CommandFileError(ValueError):
    """A command file that cannot be used; `str()` is one line naming the file and why."""


def command_name(path: Path, root: Path) -> str:
    """The command name of `path` under `root`: folders joined by ":", e.g. "git:review"."""
    parts = path.relative_to(root).with_suffix("").parts
    return ":".join(part.lower() for part in parts)


def read_command_file(
    path: Path, root: Path, scope: str, max_file_bytes: int = MAX_FILE_BYTES
) -> CustomCommand | None:
    """The command in `path` (under `root`); None for something that is not a file.

    Raises CommandFileError for a file that cannot be read, is larger than `max_file_bytes`,
    has a name that cannot be typed, malformed front matter or an empty body.
    """
    import yaml  # here: the TUI imports this module before its first frame

    if not path.is_file():
        return None
    name = command_name(path, root)
    if not all(_NAME_PART.match(part) for part in name.split(":")):
        raise CommandFileError(
            f"{path}: /{name} cannot be typed as a command (use letters, digits, - _ .)"
        )
    try:
        with path.open("rb") as handle:  # never more than the cap plus one byte
            data = handle.read(max_file_bytes + 1)
        if len(data) > max_file_bytes:
            raise CommandFileError(
                f"{path}: larger than {max_file_bytes:,} bytes (commands.max_file_bytes); "
                "not loaded"
            )
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise CommandFileError(f"{path}: cannot read it: {reason}") from None
    meta: dict[str, object] = {}
    body = text
    if match := _FRONT_MATTER.match(text):
        try:
            loaded = yaml.safe_load(match.group(1))
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" (line {mark.line + 2})" if mark is not None else ""
            raise CommandFileError(f"{path}: malformed front matter{where}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise CommandFileError(f"{path}: the front matter must be `key: value` lines")
        meta = loaded or {}
        body = text[match.end() :]
    fields = {}
    for key in ("description", "argument-hint", "model"):
        value = meta.get(key)
        if value is not None and not isinstance(value, str | int | float):
            raise CommandFileError(f"{path}: `{key}` in the front matter must be text")
        fields[key] = "" if value is None else str(value).strip()
    if not body.strip():
        raise CommandFileError(f"{path}: the command has no text to send")
    return CustomCommand(
        name=name,
        body=body,
        path=path,
        scope=scope,
        description=fields["description"],
        argument_hint=fields["argument-hint"],
        model=fields["model"],
    )
