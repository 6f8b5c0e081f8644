"""What a settings change changes, in words every front end shows (docs/adr/0059, Part 3).

One line per setting that differs: the TUI's toast after the overlay, a file edit or `/model`;
the same words wherever a front end tells the user what new settings changed. Secrets are
named, never shown.
"""

from __future__ import annotations

from typing import Any

from forge.config.keys import leaf_values
from forge.config.settings import Settings

SECRET_SETTING_KEYS = frozenset({"llm.api_key", "llm.summarization_api_key"})


def describe_changes(old: Settings, new: Settings) -> list[str]:
    """One line per setting that differs, secrets named but never shown (`llm.api_key changed`)."""
    before = leaf_values(old)
    after = leaf_values(new)
    lines: list[str] = []
    for key, value in after.items():
        if before.get(key) == value:
            continue
        if key in SECRET_SETTING_KEYS:
            lines.append(f"{key} changed")
        elif key == "mcp_servers":
            # By name only: an entry's `env`/`headers` may hold a literal secret.
            old_servers, new_servers = before.get(key) or {}, value or {}
            names = sorted(
                name
                for name in {*old_servers, *new_servers}
                if old_servers.get(name) != new_servers.get(name)
            )
            lines.append(f"{key}: {', '.join(names)} changed")
        else:
            lines.append(f"{key}: {_shown(before.get(key))} → {_shown(value)}")
    return lines


def _shown(value: Any) -> str:
    if value is None or value == "":
        return "(unset)"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or "(none)"
    return str(value)
