"""Which MCP servers a session uses: the user's `mcp_servers` plus the project's
`.forge/mcp.yaml` (project entries win) when the workspace is trusted, and `${VAR}` expansion
at connect time (for project entries only the variables in `trust.env_allowlist`)."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import ValidationError

from forge.agent.trust import ProgramSource, WorkspaceProgram, WorkspaceTrust, fingerprint_of
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
    source: str = ""
    """The workspace file that defines it ("" for the user's own config)."""
    allowed_variables: frozenset[str] | None = None
    """The `${VAR}` names its `env`/`headers` may receive (None: any, the user's config)."""
    untrusted: bool = False
    """Defined by a workspace file that is not trusted: not started (`problem` says so)."""


@dataclass(frozen=True)
class ProjectServers:
    """What the workspace's `.forge/mcp.yaml` defines, as it is now."""

    source: ProgramSource
    """Its programs and fingerprint, for the trust gate."""
    entries: list[ServerEntry] = field(default_factory=list)
    """Its entries (a file that cannot be read: one entry named after it, with the problem)."""


UNTRUSTED_PROBLEM = f"not started: {PROJECT_FILE} is not trusted (see /trust or `forge trust`)"


def read_project_servers(workspace: Path) -> ProjectServers:
    """The servers of `workspace/.forge/mcp.yaml`: a map under `mcp_servers` (or `mcpServers`,
    as pasted from other tools). A file that cannot be read gives one entry named after the
    file with the problem; a bad entry keeps its name and says what is wrong."""
    file = PROJECT_FILE.as_posix()
    path = workspace / PROJECT_FILE
    if not path.is_file():
        return ProjectServers(ProgramSource(file, (), fingerprint_of(None)))
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        problem = f"{PROJECT_FILE} cannot be read: {error}"
        source = ProgramSource(file, (), fingerprint_of(None))
        return ProjectServers(source, [ServerEntry(file, None, problem, source=file)])
    servers = data.get("mcp_servers", data.get("mcpServers", {})) if isinstance(data, dict) else {}
    if not isinstance(servers, dict):
        problem = f"{PROJECT_FILE}: mcp_servers must be a map of server names to entries"
        source = ProgramSource(file, (), fingerprint_of(servers))
        return ProjectServers(source, [ServerEntry(file, None, problem, source=file)])
    entries: list[ServerEntry] = []
    programs: list[WorkspaceProgram] = []
    for name, raw in servers.items():
        try:
            settings = McpServerSettings.model_validate(raw)
        except ValidationError as error:
            details = "; ".join(item["msg"] for item in error.errors())
            entries.append(ServerEntry(str(name), None, f"{PROJECT_FILE}: {details}", source=file))
            continue
        entries.append(ServerEntry(str(name), settings, source=file))
        if settings.enabled:
            programs.append(program_of(str(name), settings))
    return ProjectServers(ProgramSource(file, tuple(programs), fingerprint_of(servers)), entries)


def program_of(name: str, settings: McpServerSettings) -> WorkspaceProgram:
    """What starting the server `name` runs (its command line) or where it connects."""
    if settings.transport == "stdio":
        what = shlex.join([settings.command, *settings.args])
    else:
        what = f"connect to {settings.url}"
    values = [*settings.env.values(), *settings.headers.values()]
    variables = sorted({match for value in values for match in _REFERENCE.findall(value)})
    return WorkspaceProgram(name, what, tuple(variables))


def configured_servers(
    user: Mapping[str, McpServerSettings], workspace: Path, trust: WorkspaceTrust | None = None
) -> list[ServerEntry]:
    """The user's servers with the project's `.forge/mcp.yaml` over them, in that order.

    The project's entries are used only when `trust` permits its definitions (no `trust`: not
    trusted); then their `${VAR}` references expand only to the variables `trust` allows.
    Untrusted entries are listed as not started (`untrusted`), and a user server of the same
    name keeps its own entry.
    """
    entries = {name: ServerEntry(name, settings) for name, settings in user.items()}
    project = read_project_servers(workspace)
    if trust is not None and (not project.source.programs or trust.permits(project.source)):
        allowed = trust.allowed_variables()
        for entry in project.entries:
            entries[entry.name] = ServerEntry(
                entry.name, entry.settings, entry.problem, entry.source, allowed
            )
        return list(entries.values())
    for entry in project.entries:
        if entry.name not in entries and entry.settings is not None:
            entries[entry.name] = ServerEntry(
                entry.name, None, UNTRUSTED_PROBLEM, entry.source, frozenset(), untrusted=True
            )
    return list(entries.values())


def expand(
    value: str, environ: Mapping[str, str] | None = None, allowed: frozenset[str] | None = None
) -> str:
    """`value` with every `${VAR}` replaced by the variable's value ("" when unset, and when
    `allowed` is given and does not name it)."""
    source = os.environ if environ is None else environ

    def value_of(match: re.Match[str]) -> str:
        name = match.group(1)
        return source.get(name, "") if allowed is None or name in allowed else ""

    return _REFERENCE.sub(value_of, value)


def expanded(values: Mapping[str, str], allowed: frozenset[str] | None = None) -> dict[str, str]:
    """`expand` applied to every value of a map (`env`, `headers`)."""
    return {key: expand(value, allowed=allowed) for key, value in values.items()}


def secret_values(settings: McpServerSettings, allowed: frozenset[str] | None = None) -> list[str]:
    """Values from `env` and `headers` as they will be sent (expanded): secrets a session
    file or log must never show."""
    values = [
        *expanded(settings.env, allowed).values(),
        *expanded(settings.headers, allowed).values(),
    ]
    return [value for value in values if len(value) >= 4]
