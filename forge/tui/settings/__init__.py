"""The `/settings` overlay: fields, their validation and the modal screen."""

from __future__ import annotations

from forge.tui.settings.screen import SettingsScreen

__all__ = ["SettingsScreen"]
