"""`forge sessions`: a workspace's saved sessions, newest first, each subagent's session under
its parent (docs/adr/0045)."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import TextIO

from forge.agent.sessions import SessionInfo, SessionStore, workspace_key
from forge.text_safety import terminal_safe


def print_sessions(workspace: Path | str, *, store: SessionStore | None = None) -> int:
    """`forge sessions`: print this workspace's sessions, newest first, and on stderr a warning
    for each problem found in a file (a skipped line, a rebuilt header). Returns 0."""
    sessions = (store or SessionStore()).list_sessions(workspace)
    out = sys.stdout
    if not sessions:
        out.write(f"no sessions for {workspace_key(workspace)}\n")
        return 0
    ids = {info.id for info in sessions}
    children: dict[str, list[SessionInfo]] = {}
    for info in sessions:
        if info.parent in ids:
            children.setdefault(info.parent, []).append(info)
    for info in sessions:
        if info.parent in ids:
            continue  # listed under its parent
        _print_session(info, out)
        for child in reversed(children.get(info.id, [])):  # in the order they ran
            _print_session(child, out, indent="  └ ")
    out.write("resume one with: forge --resume ID   (or the latest: forge --continue)\n")
    return 0


def _print_session(info: SessionInfo, out: TextIO, indent: str = "") -> None:
    updated = datetime.fromtimestamp(info.updated).strftime("%Y-%m-%d %H:%M")
    title = f"[{info.agent}] {info.title}" if info.agent else info.title
    line = f"{indent}{info.id}  {updated}  {info.messages:>4} msgs  {info.model}  {title}"
    out.write(terminal_safe(line) + "\n")  # a title is a typed message: no raw controls
    for problem in info.problems:
        sys.stderr.write(f"forge sessions: warning: session {info.id}: {problem}\n")
