"""Settings, XDG paths, the YAML config store and its watcher.

The bottom layer of Forge: it imports nothing else from Forge. Public names are re-exported here;
the watcher stays in `forge.config.watcher` because it pulls in `watchfiles`.
"""

from __future__ import annotations

from forge.config.errors import ConfigChangedError, ConfigError, ConfigSaveError, ConfigWarning
from forge.config.settings import (
    ContextSettings,
    LLMSettings,
    Settings,
    SummarizerSettings,
    ToolsSettings,
    UISettings,
)
from forge.config.store import ConfigStore, LoadResult, load_settings, mask_secret, save_settings

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
