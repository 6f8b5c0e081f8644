"""Decoding `FORGE_*` variables with pydantic-settings' own environment source.

Imported only when such a variable is set (`forge.config.environment`): pydantic-settings is
not on the start-up path otherwise (docs/adr/0042). The source decodes exactly as when
`Settings` was a `BaseSettings`: the `FORGE_` prefix, `__` nesting, names in any case, lists
and sections as JSON. It imports no Forge module: `forge.config.settings` imports it (lazily)
and hands it the settings model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsError

__all__ = ["decode_variable", "forge_values"]


class _ForgeVariablesSource(EnvSettingsSource):
    """pydantic-settings' environment source for a settings model, limited to one variable
    when given one."""

    def __init__(
        self, model: type[BaseModel], prefix: str, delimiter: str, variable: str | None = None
    ) -> None:
        self._variable = variable.lower() if variable is not None else None
        # The source reads only the model's fields and their types (and config keys it
        # defaults itself); the model is a plain one, so the prefix and nesting are given here.
        super().__init__(
            cast("type[BaseSettings]", model),
            case_sensitive=False,
            env_prefix=prefix,
            env_nested_delimiter=delimiter,
        )

    def _load_env_vars(self) -> Mapping[str, str | None]:
        every = super()._load_env_vars()
        if self._variable is None:
            return every
        return {name: value for name, value in every.items() if name == self._variable}


def decode_variable(
    model: type[BaseModel], prefix: str, delimiter: str, variable: str
) -> dict[str, Any] | None:
    """The nested settings of `model` that `variable` supplies (names `prefix` + field, nested
    by `delimiter`), or None when its value cannot be decoded (a list or section that is not
    JSON)."""
    try:
        return _ForgeVariablesSource(model, prefix, delimiter, variable)()
    except SettingsError:
        return None


def forge_values(model: type[BaseModel], prefix: str, delimiter: str) -> dict[str, Any]:
    """The nested settings of `model` from every variable named `prefix` + field (nested by
    `delimiter`); SettingsError for one that cannot be decoded."""
    return _ForgeVariablesSource(model, prefix, delimiter)()
