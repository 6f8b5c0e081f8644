"""The settings the environment supplies, read one variable at a time.

pydantic-settings reads all `FORGE_*` variables at once and, for a value it cannot decode,
names only the section ("error parsing value for field "tools" from source
"EnvSettingsSource""). Reading each variable on its own lets every problem name its variable,
and lets a bad variable be ignored while the good ones still apply.

pydantic-settings decodes the `FORGE_*` variables (`forge.config.environment_decoding`); it is
imported only when one is set, so a start without them does not load it (docs/adr/0042).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from forge.config.keys import deep_merge, dotted_keys
from forge.config.settings import (
    ENV_NESTED_DELIMITER,
    ENV_PREFIX,
    OPENAI_ENV_VARIABLES,
    Settings,
    forge_variables,
    openai_values,
)


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


def read_environment() -> EnvironmentReading:
    """Read every settings variable on its own; never raises for a bad value."""
    reading = EnvironmentReading()
    openai = openai_values()
    for variable, (section, key) in OPENAI_ENV_VARIABLES.items():
        if os.environ.get(variable, ""):
            reading.keys_by_variable[variable] = frozenset({f"{section}.{key}"})
    forge: dict[str, Any] = {}
    for variable in forge_variables():
        from forge.config.environment_decoding import decode_variable

        values = decode_variable(Settings, ENV_PREFIX, ENV_NESTED_DELIMITER, variable)
        if values is None:
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
