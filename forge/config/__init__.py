"""Settings, XDG paths, the YAML config store and its watcher.

The bottom layer of Forge: it imports nothing else from Forge. Public names are re-exported here,
loaded on first use: `forge.config.paths` (which `forge` reads before its first frame) must not
pull in pydantic-settings by way of this package. The watcher stays in `forge.config.watcher`
because it pulls in `watchfiles`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from forge.config.errors import (
        ConfigChangedError,
        ConfigError,
        ConfigSaveError,
        ConfigWarning,
    )
    from forge.config.settings import (
        ContextSettings,
        LLMSettings,
        Settings,
        SummarizerSettings,
        ToolsSettings,
        UISettings,
    )
    from forge.config.store import (
        ConfigStore,
        LoadResult,
        load_settings,
        mask_secret,
        save_settings,
    )

_HOMES = {
    "forge.config.errors": (
        "ConfigChangedError",
        "ConfigError",
        "ConfigSaveError",
        "ConfigWarning",
    ),
    "forge.config.settings": (
        "ContextSettings",
        "LLMSettings",
        "Settings",
        "SummarizerSettings",
        "ToolsSettings",
        "UISettings",
    ),
    "forge.config.store": (
        "ConfigStore",
        "LoadResult",
        "load_settings",
        "mask_secret",
        "save_settings",
    ),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "ConfigChangedError",
    "ConfigError",
    "ConfigSaveError",
    "ConfigStore",
    "ConfigWarning",
    "ContextSettings",
    "LLMSettings",
    "LoadResult",
    "Settings",
    "SummarizerSettings",
    "ToolsSettings",
    "UISettings",
    "load_settings",
    "mask_secret",
    "save_settings",
]


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'forge.config' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
