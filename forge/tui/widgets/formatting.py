"""Short, readable text for numbers and tool calls, shared by the chat and the status pane."""

from __future__ import annotations

import json
from pathlib import Path

from forge.context.plan import PLAN_TOOL, plan_from_meta, progress
from forge.llm.messages import ToolCall
from forge.session.tool_names import TASK_TOOL

_KEY_ARGUMENTS = (
    "command",
    "path",
    "url",
    "pattern",
    "query",
    "question",
    "message",
    "summary",
    "name",
)
"""Argument names that best say what a call does, most telling first."""


def format_tokens(count: int) -> str:
    """A token count people can read at a glance: 950, 42.1k, 1.25M."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.2f}M"


def format_seconds(seconds: float) -> str:
    """A duration: "0.4 s", "3.2 s", "2 min 5 s"."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def shorten(text: str, width: int) -> str:
    """`text` on one line, cut to `width` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: max(0, width - 1)] + "…"


def tool_call_argument_summary(call: ToolCall, width: int = 60) -> str:
    """The key argument of a call in one short line (e.g. the command, or the path)."""
    try:
        arguments = call.parsed_arguments()
    except ValueError:
        return shorten(call.arguments, width)
    if call.name == PLAN_TOOL:
        return _plan_summary(arguments.get("plan"))
    agent, prompt = arguments.get("agent"), arguments.get("prompt")
    if call.name == TASK_TOOL and isinstance(agent, str) and isinstance(prompt, str):
        return shorten(f"{agent}: {prompt}", width)
    for key in _KEY_ARGUMENTS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return shorten(value, width)
    if not arguments:
        return ""
    return shorten(json.dumps(arguments, ensure_ascii=False), width)


def _plan_summary(value: object) -> str:
    """An `update_plan` call's plan in a few words, also when it is invalid (the result says
    what is wrong; the row never shows the raw JSON)."""
    plan = plan_from_meta(value)
    if plan is not None:
        return f"{len(plan)} steps, {progress(plan)}" if plan else "clear the plan"
    if isinstance(value, list):
        return f"{len(value)} step{'' if len(value) == 1 else 's'} (not a valid plan)"
    return "no valid plan"


def display_path(path: Path) -> str:
    """`path` with the home directory written as "~"."""
    try:
        return "~/" + str(path.relative_to(Path.home())) if path != Path.home() else "~"
    except ValueError:
        return str(path)
