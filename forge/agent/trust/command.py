"""`forge trust [--revoke | --show] [PATH]`: the trust decision from the shell.

Prints the workspace, each defining file with what it would run and where it stands, then
trusts the definitions as they are now (a new or changed one asks again), forgets the
decision (`--revoke`), or changes nothing (`--show`). Exit 0, 1 when the store cannot be
written, 2 when PATH is not a directory.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from forge.agent.trust.gate import WorkspaceTrust
from forge.agent.trust.programs import ProgramSource, printable
from forge.agent.trust.sources import describe_programs, workspace_sources


def run_trust_command(path: str, *, revoke: bool = False, show: bool = False) -> int:
    """Run `forge trust`; returns the exit code."""
    workspace = Path(path).expanduser().resolve()
    if not workspace.is_dir():
        print(f"forge trust: not a directory: {printable(str(workspace))}", file=sys.stderr)
        return 2
    trust = WorkspaceTrust(workspace, env_allowlist=_env_allowlist())
    sources = workspace_sources(workspace)
    print(f"Workspace: {printable(str(workspace))}")
    defined = [source for source in sources if source.programs]
    for source in defined:
        print(f"{source.file}: {trust.status(source).value}; it would run:")
        for line in describe_programs(source):
            print(f"  {line}")
    if not defined:
        print(
            "It defines nothing Forge would run (no .forge/mcp.yaml servers, no project hooks, "
            "no skills with allowed-tools)."
        )
    if trust.store_problem:
        print(f"forge trust: warning: {trust.store_problem}", file=sys.stderr)
    if show:
        return 0
    try:
        if revoke:
            had = trust.revoke()
            print("Decision forgotten: Forge asks again." if had else "No decision was stored.")
            return 0
        warning = trust.trust(sources)
    except OSError as error:
        print(f"forge trust: cannot write the trust store: {error}", file=sys.stderr)
        return 1
    if warning:
        print(f"forge trust: {warning}", file=sys.stderr)
        return 1
    print(
        "Trusted: these definitions may run. A new or changed definition asks again; "
        "`forge trust --revoke` forgets this."
    )
    _say_variables(trust, sources)
    return 0


def _env_allowlist() -> list[str]:
    from forge.config.store import load_settings

    return list(load_settings().settings.trust.env_allowlist)


def _say_variables(trust: WorkspaceTrust, sources: Sequence[ProgramSource]) -> None:
    """Which `${VAR}` references stay empty (not in `trust.env_allowlist`)."""
    referenced = {name for source in sources for p in source.programs for name in p.variables}
    refused = sorted(referenced - trust.allowed_variables())
    if refused:
        names = ", ".join(refused)
        print(f"Not in trust.env_allowlist, so left empty: {printable(names)}.")
