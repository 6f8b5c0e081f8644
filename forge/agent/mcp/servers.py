"""Which MCP servers a session uses: the user's `mcp_servers` plus the project's
`.forge/mcp.yaml` (project entries win), and `${VAR}` expansion at connect time."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from forge.config.settings import McpServerSettings

PROJECT_FILE = Path(".forge") / "mcp.yaml"
"""The project's MCP servers, relative to the workspace."""

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class ServerEntry:
    """One configured server by name: its settings, or why its entry is unusable."""

    name: str
    settings: McpServerSettings | None
    problem: str = ""


def configured_servers(user: Mapping[str, McpServerSettings], workspace: Path) -> list[ServerEntry]:
    """The user's servers with the project's `.forge/mcp.yaml` over them, in that order.

    The project file holds a map of servers under `mcp_servers` (or `mcpServers`, as pasted
    from other tools). A file that cannot be read gives one entry named after the file with
    the problem; a bad entry keeps its name and says what is wrong.
    """
    entries = {name: ServerEntry(name, settings) for name, settings in user.items()}
    path = workspace / PROJECT_FILE
    if not path.is_file():
        return list(entries.values())
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        problem = f"{PROJECT_FILE} cannot be read: {error}"
        return [*entries.values(), ServerEntry(str(PROJECT_FILE), None, problem)]
    servers = data.get("mcp_servers", data.get("mcpServers", {})) if isinstance(data, dict) else {}
    if not isinstance(servers, dict):
        problem = f"{PROJECT_FILE}: mcp_servers must be a map of server names to entries"
        return [*entries.values(), ServerEntry(str(PROJECT_FILE), None, problem)]
    for name, raw in servers.items():
        try:
            entries[str(name)] = ServerEntry(str(name), McpServerSettings.model_validate(raw))
        except ValidationError as error:
            details = "; ".join(item["msg"] for item in error.errors())
            entries[str(name)] = ServerEntry(str(name), None, f"{PROJECT_FILE}: {details}")
    return list(entries.values())


def expand(value: str, environ: Mapping[str, str] | None = None) -> str:
    """`value` with every `${VAR}` replaced by the variable's value ("" when unset)."""
    source = os.environ if environ is None else environ
    return _REFERENCE.sub(lambda match: source.get(match.group(1), ""), value)


def expanded(values: Mapping[str, str]) -> dict[str, str]:
    """`expand` applied to every value of a map (`env`, `headers`)."""
    return {key: expand(value) for key, value in values.items()}


def secret_values(settings: McpServerSettings) -> list[str]:
    """Values from `env` and `headers` as they will be sent (expanded): secrets a session
    file or log must never show."""
    values = [*expanded(settings.env).values(), *expanded(settings.headers).values()]
    return [value for value in values if len(value) >= 4]
