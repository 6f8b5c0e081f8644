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


def read_config_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist. Unreadable files raise ConfigError."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ConfigError(path, "is a directory, not a file") from None
    except PermissionError:
        raise ConfigError(path, "cannot be read (permission denied)") from None
    except UnicodeDecodeError as error:
        raise ConfigError(path, f"is not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise ConfigError(path, f"cannot be read ({error.strerror or error})") from None


def parse_config_text(text: str, path: Path) -> dict[str, Any]:
    """Parse the file's text into a mapping; an empty file is an empty mapping.

    Raises ConfigError with the line yaml reports for a syntax error, or line 1 when the top
    level is not a mapping.
    """
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        parts = [part for part in (error.context, error.problem) if part]
        message = ": ".join(parts) if parts else "invalid YAML"
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
