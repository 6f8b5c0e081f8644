"""The system prompt: who the agent is, where it works, how to use its tools, and the
project's own instructions (`AGENTS.md` at the workspace root) when there are any."""

from __future__ import annotations

import logging
import os
import platform
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from forge.context.recall import RECALL_TOOL
from forge.llm.protocols import ToolSpec

logger = logging.getLogger(__name__)

PROJECT_INSTRUCTIONS_FILE = "AGENTS.md"
MAX_PROJECT_INSTRUCTIONS_CHARS = 20_000
"""AGENTS.md beyond this is cut: it is sent with every request and must not crowd out work."""

_ROLE = """\
You are Forge, a coding agent working in a terminal on the user's project. You read and change \
files and run commands with the tools you are given, one careful step at a time, and you verify \
your work (run the tests or the program) before you call it done."""

_TOOL_RULES = """\
How to work:
- Use the tools; do not describe edits you could make. Read a file before you change it.
- Paths are relative to the workspace; you cannot read or write outside it.
- Prefer `apply_diff` for small edits to existing files and `write_file` for new files.
- For work of several steps, keep a short plan with `update_plan` and update it as you go.
- When a tool fails, read the error and change your approach; repeating the same failing call \
will end the turn.
- A user may reject a tool call with a reason: take the reason into account and carry on.

Ending your turn (these tools end it; call exactly one, as the last call of your reply):
- `task_completion` when the task is done: say what you changed and how you verified it.
- `converse` to answer or talk to the user when no task needs doing.
- `ask_question` only when you cannot go on without the user's decision; offer suggestions."""

_RECALL_RULE = """\
A shortened older output ends with `recall <id>`: call `recall` with that id for its exact text \
(cheaper than running the tool again); if the id is gone, `recall` with a `query` (words you \
remember of it) finds it."""
"""Constant bytes (the prompt's cacheable prefix never changes for it, across turns and
`--continue`); present whenever the `recall` tool is (docs/adr/0038-context-engine-v3.md)."""

_HEADLESS_RULES = """\
No user is watching this run: do not ask questions, make reasonable decisions yourself, and \
finish with `task_completion`."""


def build_system_prompt(
    workspace: Path,
    tools: Sequence[ToolSpec],
    *,
    interactive: bool = True,
    today: date | None = None,
    skills_listing: str = "",
) -> str:
    """The system prompt for an agent working in `workspace` with `tools`.

    Holds the role, the workspace path, OS and shell, the date (`today`, default the current
    date; a resumed session passes the day it started, so the prompt stays byte-identical and
    prompt caches keep matching), the tool rules (including the loop-breaking tools), the tool
    names, and the project's `AGENTS.md` when present. `interactive=False` (headless runs)
    tells the model nobody can answer questions. `skills_listing` (the skills' names,
    descriptions and paths, computed once when the session started and kept in its header,
    docs/adr/0046) comes after the tool rules, before AGENTS.md.
    """
    sections = [_ROLE, _environment(workspace, today or date.today()), _TOOL_RULES]
    if any(spec.name == RECALL_TOOL for spec in tools):
        sections.append(_RECALL_RULE)
    if tools:
        names = ", ".join(spec.name for spec in tools)
        sections.append(f"Your tools: {names}.")
    if not interactive:
        sections.append(_HEADLESS_RULES)
    if skills_listing:
        sections.append(skills_listing)
    if (instructions := project_instructions_section(workspace)) is not None:
        sections.append(instructions)
    return "\n\n".join(sections)


def project_instructions_section(workspace: Path) -> str | None:
    """The workspace's AGENTS.md as a section of a system prompt (None without one)."""
    instructions = read_project_instructions(workspace)
    if not instructions:
        return None
    return f"Project instructions from {PROJECT_INSTRUCTIONS_FILE} (follow them):\n\n{instructions}"


def session_date(header: Mapping[str, Any]) -> date:
    """The day a session started, from its header's `created` time (today when unreadable)."""
    created = header.get("created")
    if isinstance(created, int | float) and not isinstance(created, bool) and created > 0:
        try:
            return datetime.fromtimestamp(created).date()
        except (OverflowError, OSError, ValueError):
            pass
    return date.today()


def _environment(workspace: Path, today: date) -> str:
    shell = os.environ.get("SHELL") or "/bin/sh"
    system = f"{platform.system()} {platform.release()}".strip()
    return (
        "Environment:\n"
        f"- Workspace: {workspace}\n"
        f"- Operating system: {system}\n"
        f"- Shell: {shell}\n"
        f"- Today: {today.isoformat()}"
    )


def read_project_instructions(workspace: Path) -> str:
    """The text of `AGENTS.md` at the workspace root ("" when absent or unreadable)."""
    path = workspace / PROJECT_INSTRUCTIONS_FILE
    try:
        if not path.is_file():
            return ""
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError as error:
        logger.warning("could not read %s: %s", path, error)
        return ""
    if len(text) > MAX_PROJECT_INSTRUCTIONS_CHARS:
        omitted = len(text) - MAX_PROJECT_INSTRUCTIONS_CHARS
        text = text[:MAX_PROJECT_INSTRUCTIONS_CHARS] + f"\n[… {omitted} more characters omitted]"
    return text
