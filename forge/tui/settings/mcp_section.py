"""The overlay's "MCP servers" section: each server of `config.yaml` with an "enabled" box
and what it runs (command and arguments, or URL). Values of `env` and `headers` are never
shown, only their names; a save writes back only the `enabled` flags that were switched
(`forge.config.store` keeps everything else of the entry as the file has it, `${VAR}`
references included)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Checkbox, Label, Static

from forge.config.settings import McpServerSettings
from forge.text_safety import terminal_safe

MCP_KEY = "mcp_servers"
SWITCH_PREFIX = "mcp-enabled-"


def enabled_key(name: str) -> str:
    """The changed key a switched server is saved under (`mcp_servers.NAME.enabled`)."""
    return f"{MCP_KEY}.{name}.enabled"


def describe(settings: McpServerSettings) -> str:
    """What the server runs, without secrets: `stdio: npx -y pkg` or `http: URL`, then the
    names (never the values) of its environment variables or headers."""
    if settings.transport == "stdio":
        text = "stdio: " + shlex.join([settings.command, *settings.args])
        names = list(settings.env)
        label = "env"
    else:
        text = f"http: {settings.url}"
        names = list(settings.headers)
        label = "headers"
    if names:
        text += f"  ({label}: {', '.join(names)})"
    return text


def on_off(enabled: bool) -> str:
    """The box's label: what it is set to, in words."""
    return "on" if enabled else "off"


class McpToggles:
    """The switches' state: which servers are on, against what the overlay opened with."""

    def __init__(self, servers: Mapping[str, McpServerSettings]) -> None:
        self.servers = dict(servers)
        self.names = list(servers)
        self.initial = {name: entry.enabled for name, entry in servers.items()}
        self.current = dict(self.initial)

    def switch_id(self, name: str) -> str:
        """The Switch's id (server names may hold characters ids cannot)."""
        return f"{SWITCH_PREFIX}{self.names.index(name)}"

    def name_of(self, switch_id: str) -> str | None:
        """The server a switch id belongs to."""
        if not switch_id.startswith(SWITCH_PREFIX):
            return None
        index = switch_id.removeprefix(SWITCH_PREFIX)
        return self.names[int(index)] if index.isdigit() else None

    def changed_keys(self) -> set[str]:
        """`mcp_servers.NAME.enabled` for every server switched."""
        return {enabled_key(n) for n in self.names if self.current[n] != self.initial[n]}

    def changed_names(self) -> list[str]:
        """The servers switched, in order."""
        return [n for n in self.names if self.current[n] != self.initial[n]]

    def applied(self) -> dict[str, McpServerSettings]:
        """The servers with the switches applied."""
        return {
            name: entry.model_copy(update={"enabled": self.current[name]})
            for name, entry in self.servers.items()
        }

    def widgets(self) -> list[Widget]:
        """The section: a title, then one row per server (or a line saying there are none)."""
        widgets: list[Widget] = [Static("MCP servers", classes="section-title")]
        if not self.names:
            widgets.append(
                Static(
                    "None in config.yaml. Add them under `mcp_servers` (see the README); a "
                    "project's .forge/mcp.yaml is edited in that file.",
                    classes="mcp-none",
                    markup=False,
                )
            )
        for name in self.names:
            widgets.append(
                Horizontal(
                    Label(terminal_safe(name), classes="field-label", markup=False),
                    Checkbox(
                        on_off(self.current[name]),
                        self.current[name],
                        id=self.switch_id(name),
                        compact=True,
                    ),
                    Static(
                        terminal_safe(describe(self.servers[name])),
                        classes="mcp-command",
                        id=f"mcp-command-{self.names.index(name)}",
                        markup=False,
                    ),
                    classes="mcp-row",
                )
            )
        return widgets
