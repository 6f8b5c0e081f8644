"""Every file of a workspace that defines programs Forge would start: the MCP servers of
`.forge/mcp.yaml`, and the project hooks of `.forge/hooks.json` and `.claude/settings.json`'s
`hooks` key (each listed only when the file exists), and the project skills folders whose
skills pre-approve tools (`allowed-tools`, docs/adr/0046). A new kind of definition joins this list,
and so the trust dialog, `/trust`, `forge trust` and `forge run`'s warnings, without further
changes."""

from __future__ import annotations

from pathlib import Path

from forge.agent.trust.programs import ProgramSource, printable


def workspace_sources(workspace: Path) -> list[ProgramSource]:
    """Each defining file of `workspace` as it is now (a missing file defines nothing)."""
    from forge.agent.hooks.config import project_hooks
    from forge.agent.mcp.servers import read_project_servers  # forge.agent.mcp loads only here
    from forge.agent.skills.trust_source import project_skill_sources

    hook_sources = [hook_file.source for hook_file in project_hooks(workspace)]
    skill_sources = project_skill_sources(workspace)
    return [read_project_servers(workspace).source, *hook_sources, *skill_sources]


def describe_programs(source: ProgramSource) -> list[str]:
    """One line per program of `source`: its name, what it runs, the variables it reads."""
    lines = []
    for program in source.programs:
        line = f"{program.name}: {program.command}"
        if program.variables:
            line += " (reads " + ", ".join(f"${{{name}}}" for name in program.variables) + ")"
        lines.append(line)
    return [printable(line) for line in lines]
