"""What a running child agent has done so far (docs/adr/0045): the figures the status pane
and the `task` row show, taken from the child's events."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from forge.agent.events import (
    AssistantMessageDone,
    SubagentEvent,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    UsageEvent,
)
from forge.llm.messages import ToolCall
from forge.text_safety import terminal_safe
from forge.tui.widgets.formatting import format_tokens, tool_call_argument_summary

TOOL_ICONS = {"running": "●", "ok": "✓", "error": "✗"}


@dataclass
class ChildProgress:
    """One child: its name, the tool it runs now, its requests and tokens, its tool rows."""

    agent: str
    current_tool: str = ""
    turns: int = 0
    tokens: int = 0
    finished: str = ""
    """How its run ended ("" while it runs)."""
    tools: dict[str, tuple[ToolCall, str]] = field(default_factory=dict)
    """Its tool calls by id, in order, with their status ("running", "ok", "error")."""

    def observe(self, event: SubagentEvent) -> None:
        """Take note of one of the child's events."""
        inner = event.event
        if isinstance(inner, AssistantMessageDone):
            self.turns += 1
        elif isinstance(inner, UsageEvent):
            self.tokens = inner.session_prompt_tokens + inner.session_completion_tokens
        elif isinstance(inner, ToolCallStarted):
            self.current_tool = inner.call.name
            self.tools[inner.call.id] = (inner.call, "running")
        elif isinstance(inner, ToolCallFinished):
            self.current_tool = ""
            self.tools[inner.call.id] = (inner.call, "error" if inner.is_error else "ok")
        elif isinstance(inner, TurnFinished):
            self.current_tool = ""
            self.finished = inner.reason

    def summary(self, *, named: bool = True, task: str = "") -> str:
        """One line: "explore · read_file · 3 turns · 4.1k tokens"; without the agent's name
        when not `named` (the `task` row's title already says it); with the first words of
        its `task` prompt after the name when given (two children of one agent)."""
        parts = [self.agent] if named else []
        if task:
            parts.append(f"“{first_words(task)}”")
        if self.current_tool:
            parts.append(self.current_tool)
        parts.append(f"{self.turns} turn{'s' if self.turns != 1 else ''}")
        parts.append(f"{format_tokens(self.tokens)} tokens")
        return terminal_safe(" · ".join(parts))

    def tool_lines(self) -> str:
        """The child's tool calls, one line each (icon, name, key argument)."""
        return child_tool_lines(self.tools.values())


def first_words(text: str, count: int = 4) -> str:
    """The first `count` words of `text`, "…" when there are more."""
    words = text.split()
    return " ".join(words[:count]) + (" …" if len(words) > count else "")


def child_tool_lines(calls: Iterable[tuple[ToolCall, str]]) -> str:
    """A child's tool calls with their status, one line each (icon, name, key argument): live
    from its events, resumed from its `task` result (docs/adr/0048)."""
    return "\n".join(
        terminal_safe(
            f"{TOOL_ICONS.get(status, '·')} {call.name}  {tool_call_argument_summary(call)}"
        )
        for call, status in calls
    )
