"""Building settings from the file and the environment, leaving out only the values that fail.

One invalid value (say `context.warning_threshold: 1.5`) must not cost the user the rest of the
file (the API key, the base URL, the model): that value alone falls back to the layer below
(the file under an environment variable, the default under the file) and is reported with its
key, line or variable, and reason. See ADR 0022.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from forge.config.environment import EnvironmentReading
from forge.config.errors import ConfigError
from forge.config.settings import Settings, settings_sources
from forge.config.yaml_file import line_of_key

MAX_ROUNDS = 50
"""Validation rounds at most; each round drops at least one value, so this is never reached
by a real file (the settings have fewer keys), but a bug must not loop forever."""


@dataclass
class PartialBuild:
    """The settings built and the values left out, each as a ConfigError (file or environment)."""

    settings: Settings
    problems: tuple[ConfigError, ...]


def build(file_data: Mapping[str, Any], environment: Mapping[str, Any] | None) -> Settings:
    """Settings from `file_data` under `environment` (None: no environment at all)."""
    if environment is None:
        with settings_sources(file_data, include_environment=False):
            return Settings()
    with settings_sources(file_data, environment_data=environment):
        return Settings()


def build_keeping_valid(
    file_data: Mapping[str, Any],
    environment: EnvironmentReading,
    path: Path,
    text: str,
) -> PartialBuild:
    """Validate; drop each value pydantic rejects from the source that supplied it; repeat.

    A problem on a key that neither source holds (a cross-field rule such as "auto ≥ warning"
    failing against a default) drops the other key the rule's message names, reported on that
    key ("not applied: …"); when the message names none the source holds, the section holding
    the key is dropped. A list with a bad item is dropped whole (the key keeps the item's
    index). Undecodable variables come first in the problems.
    """
    file_copy: dict[str, Any] = copy.deepcopy(dict(file_data))
    env_copy: dict[str, Any] = copy.deepcopy(environment.values)
    problems: list[ConfigError] = [
        ConfigError(path, reason, source="environment", variable=variable)
        for variable, reason in environment.undecodable.items()
    ]
    for _ in range(MAX_ROUNDS):
        try:
            return PartialBuild(build(file_copy, env_copy), tuple(problems))
        except ValidationError as error:
            found = _problems_of(error, path, text, environment, file_copy, env_copy)
            if not found:
                break
            problems.extend(found)
    # Unreachable for the settings Forge has; still, say so rather than fall back silently.
    problems.append(ConfigError(path, "could not be validated; using the defaults"))
    return PartialBuild(build({}, None), tuple(problems))


def _problems_of(
    error: ValidationError,
    path: Path,
    text: str,
    environment: EnvironmentReading,
    file_copy: dict[str, Any],
    env_copy: dict[str, Any],
) -> list[ConfigError]:
    """Turn pydantic's errors into ConfigErrors, dropping each bad value from its source."""
    found: list[ConfigError] = []
    for item in error.errors(include_input=False, include_url=False):
        location = field_location(item["loc"])
        setting = tuple(part for part in location if isinstance(part, str))
        key = ".".join(str(part) for part in location) or None
        context = item.get("ctx") or {}
        message = str(context["error"]) if item["type"] == "value_error" else item["msg"]
        if setting and _remove(env_copy, setting):
            variables = environment.variables_for(".".join(setting)) or [""]
            found.append(
                ConfigError(
                    path, message, key=key, source="environment", variable=variables[-1] or None
                )
            )
        elif setting and _remove(file_copy, setting):
            line = line_of_key(text, location) if text else None
            found.append(ConfigError(path, message, line=line, key=key))
        elif (other := _referenced_key(message, setting, file_copy)) is not None:
            _remove(file_copy, other)
            line = line_of_key(text, other) if text else None
            found.append(
                ConfigError(path, f"not applied: {key} {message}", line=line, key=".".join(other))
            )
        elif (other := _referenced_key(message, setting, env_copy)) is not None:
            _remove(env_copy, other)
            other_key = ".".join(other)
            variables = environment.variables_for(other_key) or [""]
            found.append(
                ConfigError(
                    path,
                    f"not applied: {key} {message}",
                    key=other_key,
                    source="environment",
                    variable=variables[-1] or None,
                )
            )
        elif len(setting) > 1 and _remove(file_copy, setting[:-1]):
            line = line_of_key(text, setting[:-1]) if text else None
            section = ".".join(setting[:-1])
            found.append(
                ConfigError(
                    path,
                    f"{message} (with the other values of `{section}`; that section of the "
                    "file is not applied)",
                    line=line,
                    key=key,
                )
            )
        elif len(setting) > 1 and _remove(env_copy, setting[:-1]):
            section = ".".join(setting[:-1])
            variables = environment.variables_for(section) or [""]
            found.append(
                ConfigError(
                    path,
                    f"{message} (with the other values of `{section}`; the environment's values "
                    "for that section are not applied)",
                    key=key,
                    source="environment",
                    variable=variables[-1] or None,
                )
            )
    return found


_DOTTED_KEY = re.compile(r"[a-z_]+(?:\.[a-z_]+)+")


def _referenced_key(
    message: str, setting: tuple[str, ...], data: Mapping[str, Any]
) -> tuple[str, ...] | None:
    """A key that a cross-field rule's message names ("must be at least
    context.warning_threshold") and that `data` holds, for a rule failing on a default.

    Names are tried as written, then relative to each section above `setting`.
    """
    for token in _DOTTED_KEY.findall(message):
        parts = tuple(token.split("."))
        for depth in range(len(setting) - 1, -1, -1):
            candidate = setting[:depth] + parts
            if candidate != setting and _holds(data, candidate):
                return candidate
    return None


def _holds(data: Mapping[str, Any], location: tuple[str, ...]) -> bool:
    node: Any = data
    for part in location:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _remove(data: MutableMapping[str, Any], location: tuple[str, ...]) -> bool:
    """Delete the value at `location` if present; returns whether something was deleted."""
    node: Any = data
    for part in location[:-1]:
        if not isinstance(node, MutableMapping) or part not in node:
            return False
        node = node[part]
    if isinstance(node, MutableMapping) and location[-1] in node:
        del node[location[-1]]
        return True
    return False


def field_location(location: Sequence[str | int]) -> tuple[str | int, ...]:
    """The part of a pydantic error location that names settings, not validator internals.

    Unions and annotated validators add tags such as "int" or "function-after[...]"; they are
    dropped by walking the settings models and keeping only real field names and list indexes.
    """
    kept: list[str | int] = []
    model: Any = Settings
    if len(location) >= 2 and location[0] == "mcp_servers":
        # A map of server entries: a bad entry is left out whole, by its name (an entry
        # without one of its fields would only fail again).
        return ("mcp_servers", str(location[1]))
    for part in location:
        fields = getattr(model, "model_fields", None)
        if isinstance(part, str) and fields is not None and part in fields:
            kept.append(part)
            annotation = fields[part].annotation
            model = annotation if isinstance(annotation, type) else None
        elif isinstance(part, int) and kept:
            kept.append(part)
        else:
            continue
    return tuple(kept)
