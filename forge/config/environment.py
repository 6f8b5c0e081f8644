"""The settings the environment supplies, read one variable at a time.

pydantic-settings reads all `FORGE_*` variables at once and, for a value it cannot decode,
names only the section ("error parsing value for field "tools" from source
"EnvSettingsSource""). Reading each variable on its own lets every problem name its variable,
and lets a bad variable be ignored while the good ones still apply.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsError

from forge.config.keys import deep_merge, dotted_keys
from forge.config.settings import (
    ENV_NESTED_DELIMITER,
    ENV_PREFIX,
    OPENAI_ENV_VARIABLES,
    Settings,
)


class _OneVariableSource(EnvSettingsSource):
    """pydantic-settings' own environment source, limited to one variable."""

    def __init__(self, settings_cls: type[BaseSettings], variable: str) -> None:
        self._variable = variable.lower()
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        every = super()._load_env_vars()
        return {name: value for name, value in every.items() if name == self._variable}


@dataclass
class EnvironmentReading:
    """What the environment supplies: nested `values`, who set which key, and what failed.

    `keys_by_variable` maps each variable that supplied something to its dotted keys;
    `undecodable` maps a variable whose value could not be decoded (a list that is not JSON)
    to the reason.
    """

    values: dict[str, Any] = field(default_factory=dict)
    keys_by_variable: dict[str, frozenset[str]] = field(default_factory=dict)
    undecodable: dict[str, str] = field(default_factory=dict)

    @property
    def keys(self) -> frozenset[str]:
        """Every dotted key some variable supplied."""
        return frozenset().union(*self.keys_by_variable.values())

    def variables_for(self, key: str) -> list[str]:
        """The variables that supplied `key`, a part of it or a section holding it."""
        return [
            variable
            for variable, keys in self.keys_by_variable.items()
            if any(_overlaps(key, supplied) for supplied in keys)
        ]


def _overlaps(key: str, other: str) -> bool:
    return key == other or other.startswith(f"{key}.") or key.startswith(f"{other}.")


def forge_variables() -> list[str]:
    """The names of the `FORGE_*` variables that can hold a setting (not `FORGE_CONFIG`)."""
    sections = {name.upper() for name in Settings.model_fields}
    names = []
    for name in sorted(os.environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX):
            continue
        head = upper[len(ENV_PREFIX) :].split(ENV_NESTED_DELIMITER, 1)[0]
        if head in sections:
            names.append(name)
    return names


def read_environment() -> EnvironmentReading:
    """Read every settings variable on its own; never raises for a bad value."""
    reading = EnvironmentReading()
    openai: dict[str, Any] = {}
    for variable, (section, key) in OPENAI_ENV_VARIABLES.items():
        value = os.environ.get(variable, "")
        if value:
            openai.setdefault(section, {})[key] = value
            reading.keys_by_variable[variable] = frozenset({f"{section}.{key}"})
    forge: dict[str, Any] = {}
    for variable in forge_variables():
        try:
            values = _OneVariableSource(Settings, variable)()
        except SettingsError:
            reading.undecodable[variable] = (
                "is not valid JSON (lists and sections are written as JSON, "
                'e.g. ["read_file", "list_files"])'
            )
            continue
        if values:
            forge = deep_merge(forge, values)
            reading.keys_by_variable[variable] = frozenset(dotted_keys(values))
    reading.values = deep_merge(openai, forge)
    return reading
