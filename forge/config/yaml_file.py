"""Reading the YAML config file safely and pointing at lines in it.

Only `yaml.safe_load` and `yaml.compose` with the safe loader are used: a config file can never
construct arbitrary Python objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from forge.config.errors import ConfigError
from forge.config.paths import UnusableDirectoryError, file_in_the_way


def read_config_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist. Unreadable files raise ConfigError."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ConfigError(path, "is a directory, not a file") from None
    except NotADirectoryError:
        blocker = file_in_the_way(path.parent)
        if blocker is None:
            raise ConfigError(path, "cannot be read: a parent is not a directory") from None
        raise ConfigError(
            path, f"cannot be read: {UnusableDirectoryError(path.parent, blocker)}"
        ) from None
    except PermissionError:
        raise ConfigError(path, "cannot be read (permission denied)") from None
    except OSError as error:
        raise ConfigError(path, f"cannot be read ({error.strerror or error})") from None


def decode_config(content: bytes, path: Path) -> str:
    """The file's bytes as text; raises ConfigError when they are not UTF-8."""
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(path, f"is not UTF-8 text (byte {error.start})") from None


def read_config_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist. Unreadable files raise ConfigError."""
    content = read_config_bytes(path)
    return None if content is None else decode_config(content, path)


# Errors found while scanning a token: yaml's problem mark is where it gave up (often the next
# line, or the end of the file); the context mark is where the token began, which is the line
# to fix. Errors found while parsing a block are marked where they happen.
_CONTEXTS_MARKING_THE_START = ("while scanning", "while parsing a flow")


def parse_config_text(text: str, path: Path) -> dict[str, Any]:
    """Parse the file's text into a mapping; an empty file is an empty mapping.

    Raises ConfigError with the line to fix for a syntax error (see `syntax_error_line`), or
    line 1 when the top level is not a mapping.
    """
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        parts = [part for part in (error.problem, error.context) if part]
        message = " ".join(
            [parts[0], f"({parts[1]})"] if len(parts) == 2 else parts or ["invalid YAML"]
        )
        line = syntax_error_line(error, text)
        raise ConfigError(path, f"invalid YAML: {message}", line=line) from None
    except yaml.YAMLError as error:
        raise ConfigError(path, f"invalid YAML: {error}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            path, "the top level must be a mapping of sections (llm:, context:, …)", line=1
        )
    return data


def syntax_error_line(error: yaml.MarkedYAMLError, text: str) -> int | None:
    """The 1-based line the user has to fix for a yaml syntax error.

    For an unfinished token (a key without ":", an unclosed quote or bracket) that is where the
    token began, not the line where yaml noticed. For "mapping values are not allowed here"
    after a key line missing its ":", yaml reads the two lines as one plain scalar; the line
    reported is the first line of that scalar.
    """
    context = error.context or ""
    if error.context_mark is not None and context.startswith(_CONTEXTS_MARKING_THE_START):
        return error.context_mark.line + 1
    mark = error.problem_mark or error.context_mark
    if mark is None:
        return None
    line = mark.line
    if error.problem == "mapping values are not allowed here":
        lines = text.splitlines()
        indent = _indent(lines[line]) if line < len(lines) else 0
        while line > 0 and _continues_plain_scalar(lines[line - 1], indent):
            line -= 1
    return line + 1


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _continues_plain_scalar(previous: str, indent: int) -> bool:
    """Whether `previous` is a line of words yaml joined with the next line into one scalar."""
    stripped = previous.strip()
    if not stripped or stripped.startswith(("#", "-")) or _indent(previous) != indent:
        return False
    return ":" not in stripped


def line_of_key(text: str, location: Sequence[str | int]) -> int | None:
    """The 1-based line of the deepest part of `location` found in the YAML text.

    `location` is a path like ("context", "warning_threshold") or ("tools", "auto_approve", 2);
    the walk stops at the first part the document does not contain.
    """
    try:
        node: Node | None = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line: int | None = None
    for part in location:
        if isinstance(node, MappingNode) and isinstance(part, str):
            # The last duplicate wins in safe_load, so search from the end.
            for key_node, value_node in reversed(node.value):
                if isinstance(key_node, ScalarNode) and key_node.value == part:
                    line = key_node.start_mark.line + 1
                    node = value_node
                    break
            else:
                break
        elif (
            isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value)
        ):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line
