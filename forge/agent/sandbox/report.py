"""What the sandbox does, in words: `/sandbox`, `forge sandbox --check` and ACP's command.

`sandbox_lines` describes a session's sandbox; `run_sandbox_check` is `forge sandbox
--check`: it builds the sandbox the settings describe for a workspace, runs one confined
command through it (so the network namespace and the process bound are really made), prints
the same lines and exits 0 when commands are confined or the sandbox is off on purpose, 1 when
it should confine and cannot.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from forge.agent.sandbox.probe import landlock_abi
from forge.agent.sandbox.sandbox import CommandSandbox, command_sandbox
from forge.agent.sandbox.state import SandboxState

LANDLOCK_NOTE = (
    "Landlock (ABI {abi}) is available on this kernel, but Forge does not confine with it "
    "alone: it would keep only some of the promises (no process containment, secrets only "
    "partly hidden; docs/adr/0053). Install bubblewrap."
)
LANDLOCK_UNUSED = (
    "Landlock (ABI {abi}): not used; bubblewrap's namespaces hold every point above "
    "(docs/adr/0053)."
)


def sandbox_lines(state: SandboxState) -> list[str]:
    """The sandbox's state, one point per line."""
    lines = [f"Sandbox: {state.summary()} — tools.sandbox.mode: {state.mode}"]
    if state.enabled:
        lines.extend(f"- {detail}" for detail in state.details)
        if abi := landlock_abi():
            lines.append("- " + LANDLOCK_UNUSED.format(abi=abi))
    elif state.refuses:
        lines.append("- the model's commands are refused (mode on, nothing can confine them)")
    else:
        lines.append("- the model's commands run unconfined, as your own commands do; each asks")
        lines.append("  unless allowed (permission mode, command allowlist)")
        lines.append("- environment: still no provider keys and no FORGE_* settings")
        abi = landlock_abi() if state.mechanism == "none" and state.mode != "off" else 0
        if abi:
            lines.append("- " + LANDLOCK_NOTE.format(abi=abi))
    lines.append(
        "Unconfined always: your ! commands, your hooks and trusted project hooks, MCP servers "
        "(unless a server sets sandbox: true)."
    )
    return lines


async def _trial(sandbox: CommandSandbox, workspace: Path) -> str:
    """Run `true` confined; "" when it ran, else what went wrong."""
    from forge.agent.tools.base import ToolContext, ToolError
    from forge.agent.tools.execute_command import ExecuteCommandArgs, ExecuteCommandTool

    context = ToolContext(workspace=workspace, sandbox=sandbox, command_timeout=30)
    try:
        result = await ExecuteCommandTool().run(ExecuteCommandArgs(command="true"), context)
    except ToolError as error:
        return str(error)
    return "" if result.exit_code == 0 else result.content.splitlines()[0]


def run_sandbox_check(path: str) -> int:
    """`forge sandbox --check [PATH]`; returns the exit code."""
    from forge.config.store import load_settings

    workspace = Path(path).expanduser().resolve()
    if not workspace.is_dir():
        print(f"forge sandbox: not a directory: {workspace}", file=sys.stderr)
        return 2
    settings = load_settings().settings
    sandbox = command_sandbox(settings, workspace)
    try:
        problem = asyncio.run(_trial(sandbox, workspace)) if sandbox.enabled else ""
        state = sandbox.state()
    finally:
        sandbox.close()
    print(f"Workspace: {workspace}")
    for line in sandbox_lines(state):
        print(line)
    if problem:
        print(f"forge sandbox: a confined command failed: {problem}", file=sys.stderr)
        return 1
    return 0 if state.enabled or state.mode == "off" else 1
