"""A session sandbox over real bubblewrap, and a home folder the sandbox can see.

pytest's `tmp_path` is under /tmp, which a confined command sees as the session's own /tmp: a
home folder there would be invisible anyway and prove nothing about the secret paths. So the
home (and Forge's XDG folders in it) live under /var/tmp for these tests, removed after each.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from forge.agent.sandbox.probe import find_mechanism
from forge.agent.sandbox.sandbox import CommandSandbox
from forge.agent.tools.base import ToolContext, ToolResult
from forge.agent.tools.registry import default_registry
from forge.config.settings import SandboxSettings
from forge.llm.messages import ToolCall

needs_bubblewrap = pytest.mark.skipif(
    find_mechanism().name != "bubblewrap",
    reason=f"no bubblewrap here: {find_mechanism().problem} (.ci/run installs it)",
)


@pytest.fixture
def visible_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home folder outside /tmp with Forge's XDG folders in it; HOME and XDG_* point there."""
    root = Path(tempfile.mkdtemp(prefix="forge-sandbox-test-", dir="/var/tmp"))
    home = root / "home"
    for variable, sub in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CACHE_HOME", ".cache"),
    ):
        (home / sub).mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(variable, str(home / sub))
    monkeypatch.setenv("HOME", str(home))
    yield home
    shutil.rmtree(root, ignore_errors=True)


def make_sandbox(
    workspace: Path,
    *,
    readable: Sequence[Path] = (),
    hide_env: Sequence[str] = (),
    program: str = "bwrap",
    **settings: object,
) -> CommandSandbox:
    """A session's sandbox over `workspace` with `tools.sandbox` `settings`."""
    return CommandSandbox(
        SandboxSettings.model_validate(settings),
        workspace,
        hide_env=hide_env,
        readable=lambda: list(readable),
        program=program,
    )


async def run_model_command(
    sandbox: CommandSandbox,
    workspace: Path,
    command: str,
    *,
    timeout_seconds: float | None = None,
    on_output: Callable[[str], None] | None = None,
    unconfined_approved: bool = False,
    **arguments: object,
) -> ToolResult:
    """`execute_command` as the model calls it (JSON arguments through the registry)."""
    payload: dict[str, object] = {"command": command, **arguments}
    if timeout_seconds is not None:
        payload["timeout"] = timeout_seconds
    call = ToolCall(id="call_1", name="execute_command", arguments=json.dumps(payload))
    context = ToolContext(
        workspace=workspace,
        on_output=on_output,
        sandbox=sandbox,
        unconfined_approved=unconfined_approved,
    )
    return await default_registry().execute(call, context)


def processes_with(marker: str) -> list[int]:
    """Pids of live (not zombie) processes one of whose arguments is `marker` (`sleep 7301`
    for "7301"; not a shell whose script merely mentions it)."""
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                arguments = cmdline.read().decode("utf-8", "replace")
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as stat:
                state = stat.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in arguments.split("\0") and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found
