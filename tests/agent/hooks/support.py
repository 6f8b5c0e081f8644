"""Helpers for the hooks tests: real config files, real workspaces, real subprocesses."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from forge.agent.hooks.engine import Hooks
from forge.agent.hooks.payloads import HookSession
from forge.agent.trust.gate import WorkspaceTrust
from forge.config.paths import config_path
from forge.config.store import LoadResult, load_settings


def command_hook(command: str, matcher: str = "", timeout: float | None = None) -> dict[str, Any]:
    """One matcher group holding one command hook."""
    hook: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    return {"matcher": matcher, "hooks": [hook]}


def write_user_hooks(definitions: dict[str, Any], **extra: Any) -> LoadResult:
    """Write `hooks:` into the user's config.yaml (JSON is YAML) and load it for real."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": {**definitions, **extra}}, indent=2), encoding="utf-8")
    return load_settings()


def write_project_hooks(
    workspace: Path, definitions: dict[str, Any], file: str = ".forge/hooks.json"
) -> Path:
    """Write a project hooks file (`{"hooks": ...}`) into the workspace."""
    path = workspace / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": definitions}, indent=2), encoding="utf-8")
    return path


def user_hooks_engine(workspace: Path, definitions: dict[str, Any]) -> Hooks:
    """A `Hooks` with `definitions` as the user's hooks, loaded through config.yaml."""
    result = write_user_hooks(definitions)
    assert not result.problems, result.problems
    return Hooks.load(result.settings, workspace, WorkspaceTrust(workspace))


def session(workspace: Path, mode: str = "ask") -> HookSession:
    return HookSession("session-1", str(workspace / "session.jsonl"), workspace.resolve(), mode)


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return fields[0] not in ("Z", "X")
