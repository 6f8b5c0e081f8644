"""`forge sessions`: a workspace's saved sessions, newest first, each subagent's session under
its parent (docs/adr/0045)."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import TextIO

from forge.agent.history.session_file import (
    SessionInfo,
    SessionNotFoundError,
    SessionStore,
    workspace_key,
)
from forge.agent.history.session_search import SessionSearch
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
    title = f"[{info.agent}] {info.label}" if info.agent else info.label
    line = f"{indent}{info.id}  {updated}  {info.messages:>4} msgs  {info.model}  {title}"
    if info.forked_from:
        line += f"  (fork of {info.forked_from})"
    out.write(terminal_safe(line) + "\n")  # a title is a typed message: no raw controls
    for problem in info.problems:
        sys.stderr.write(f"forge sessions: warning: session {info.id}: {problem}\n")


def print_search(
    workspace: Path | str,
    text: str,
    *,
    include_tools: bool = False,
    all_workspaces: bool = False,
    store: SessionStore | None = None,
) -> int:
    """`forge sessions --search TEXT`: each session holding `text`, newest first: its line
    (full ID, when, name or title) and under it the line that holds the text. 0 when some
    session holds it, 1 when none does."""
    hits = SessionSearch(store).search(
        text, None if all_workspaces else workspace, include_tools=include_tools
    )
    out = sys.stdout
    if not hits:
        where = "any workspace" if all_workspaces else workspace_key(workspace)
        out.write(f"no session of {where} holds {text!r}\n")
        return 1
    for hit in hits:
        _print_session(hit.info, out)
        if all_workspaces:
            out.write(terminal_safe(f"    in {hit.info.workspace}") + "\n")
        out.write(terminal_safe(f"    {hit.kind}: {hit.line}") + "\n")
    return 0


def rename_session(
    workspace: Path | str, fragment: str, name: str, *, store: SessionStore | None = None
) -> int:
    """`forge sessions --rename ID NAME`: name the session `fragment` names (a whole id, or a
    unique start or end of one of the workspace's). 0, or 1 with the reason on stderr."""
    store = store or SessionStore()
    try:
        session_id = store.find(workspace, fragment)
        store.rename(session_id, name.strip())
    except (SessionNotFoundError, ValueError) as error:
        sys.stderr.write(f"forge sessions: {error}\n")
        return 1
    sys.stdout.write(terminal_safe(f"session {session_id} is now named {name.strip()!r}") + "\n")
    return 0
