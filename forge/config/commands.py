"""`forge config path|show|validate`: locate, display and check the config file."""

from __future__ import annotations

import re
import sys
from typing import Any, TextIO

import yaml

from forge.config.keys import leaf_values
from forge.config.paths import config_path
from forge.config.store import API_KEY, LoadResult, load_settings, mask_secret

ACTIONS = ("path", "show", "validate")


def run_config_command(action: str) -> int:
    """Run one `forge config` action; returns the process exit code."""
    if action == "path":
        print(config_path())
        return 0
    if action == "show":
        result = load_settings()
        _print_warnings(result, sys.stderr)
        if result.error is not None:
            _print_error(result, sys.stderr)
            print(f"note: {_fallback_note(result)}", file=sys.stderr)
        sys.stdout.write(render_effective_settings(result))
        return 0
    if action == "validate":
        # Warnings (unknown keys) do not fail validation: the file works as it is.
        result = load_settings()
        _print_warnings(result, sys.stderr)
        if result.error is not None:
            _print_error(result, sys.stderr)
            return 1
        suffix = "" if result.path.exists() else " (no file; defaults and environment)"
        warned = f" with {len(result.warnings)} warning(s)" if result.warnings else ""
        print(f"ok: {result.path}{suffix}{warned}")
        return 0
    print(
        f"forge config: unknown action {action!r} (expected {', '.join(ACTIONS)})", file=sys.stderr
    )
    return 2


def _fallback_note(result: LoadResult) -> str:
    if result.save_blocked is not None:
        return "the file could not be read; showing defaults and the environment"
    return "showing defaults for the values not applied; every other value applies"


def _print_warnings(result: LoadResult, stream: TextIO) -> None:
    for warning in result.warnings:
        print(f"warning: {warning}", file=stream)


def _print_error(result: LoadResult, stream: TextIO) -> None:
    assert result.error is not None
    print(f"error: {result.path}", file=stream)
    for detail in result.error.details:
        print(f"  {detail}", file=stream)


def _scalar(value: Any) -> str:
    """One value as inline YAML (flow style for lists)."""
    rendered = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10**6)
    return rendered.removesuffix("\n").removesuffix("\n...").strip()


MCP_SERVERS = "mcp_servers"
"""The settings key whose servers' `env` and `headers` values may hold secrets."""


def _masked_servers(servers: dict[str, Any]) -> dict[str, Any]:
    """MCP server entries with every literal `env`/`headers` value masked; a value that reads
    a `${VAR}` is shown (the secret is in the variable, not the file)."""
    masked: dict[str, Any] = {}
    for name, entry in servers.items():
        entry = dict(entry)
        for field_name in ("env", "headers"):
            if isinstance(entry.get(field_name), dict):
                entry[field_name] = {
                    key: text if _only_references(text) else mask_secret(str(text))
                    for key, text in entry[field_name].items()
                }
        masked[name] = entry
    return masked


def _only_references(text: object) -> bool:
    return isinstance(text, str) and re.search(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}", text) is not None


def render_effective_settings(result: LoadResult) -> str:
    """The effective settings as YAML, the API key masked, values from the environment marked."""
    lines = [f"# effective settings; file: {result.path}"]
    written_sections: list[str] = []
    for key, value in leaf_values(result.settings).items():
        *sections, name = key.split(".")
        for depth, section in enumerate(sections):
            if written_sections[: depth + 1] != sections[: depth + 1]:
                lines.append(f"{'  ' * depth}{section}:")
                written_sections = sections[: depth + 1]
        shown = mask_secret(value) if key == API_KEY else value
        if key == MCP_SERVERS:
            shown = _masked_servers(value)
        line = f"{'  ' * len(sections)}{name}: {_scalar(shown)}"
        if key in result.env_keys:
            line += "  # from environment"
        lines.append(line)
    return "\n".join(lines) + "\n"
