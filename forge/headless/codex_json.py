"""`forge run --output-format codex-json`: the events `codex exec --json` prints, for the
tools that read them (Codex's `exec_events.rs`, its TypeScript SDK's `events.ts`/`items.ts`).

One JSON object per line: `thread.started` (`thread_id`: Forge's session id) and
`turn.started` first; then `item.started`/`item.updated`/`item.completed` for each thing the
agent did; last `turn.completed` with the run's usage (Codex's convention: `input_tokens`
includes `cached_input_tokens`) or `turn.failed` with the reason. Items:
- `reasoning` and `agent_message` for what the model thought and said (a `task_completion`
  or `converse` answer is the last `agent_message`);
- `command_execution` for `execute_command` (status `declined` when no one could approve); a
  background command's stays `in_progress`, `item.updated` as its output comes, and is
  completed (exit code 0) or failed when it ends (docs/adr/0057);
- `file_change` for `write_file`/`apply_diff` (kind `add` for a new file, else `update`);
- `todo_list` for `update_plan` (started once, then updated);
- `mcp_tool_call` for every other tool: an MCP server's (`server__tool`) with its server, and
  Forge's own tools with server `forge`;
- `error` for a non-fatal error.
Nothing else is written (no Forge extras: Codex's consumers parse a closed set of types);
warnings go to stderr as in the text mode. A child agent's calls are not items (Codex's
`exec` has none); its `task` call is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO, assert_never

from forge.agent.events import (
    AssistantMessageDone,
    ErrorEvent,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from forge.agent.mcp.naming import SEPARATOR
from forge.context.plan import PLAN_TOOL, PlanStatus, plan_from_meta
from forge.headless.claude_result import tool_input
from forge.headless.jsonl import dumps
from forge.headless.output import ANSWER_TOOLS, OutputWriter
from forge.llm.messages import ToolCall
from forge.session.background_follow import (
    BackgroundEnded,
    BackgroundLines,
    BackgroundUpdate,
    is_background_start,
)
from forge.session.events import SessionEvent

COMMAND_TOOL = "execute_command"
FILE_TOOLS = frozenset({"write_file", "apply_diff"})
FORGE_SERVER = "forge"
"""The `server` of an `mcp_tool_call` item for one of Forge's own tools."""


class CodexJsonWriter(OutputWriter):
    """codex-json: Codex's thread, turn and item events (see the module)."""

    def __init__(self, out: TextIO, err: TextIO, secrets: Sequence[str] = ()) -> None:
        super().__init__(out, err, secrets)
        self._items = 0
        self._open: dict[str, dict[str, Any]] = {}
        """Items started and not completed, by tool call id."""
        self._background: dict[str, dict[str, Any]] = {}
        """`command_execution` items of background commands, in progress, by command id."""
        self._plan_item: dict[str, Any] | None = None
        self._last_message = ""
        self._fatal = ""
        self._started = False

    def _write(self, record: dict[str, Any]) -> None:
        self.write_out(dumps(record) + "\n")

    def _new_item(self, kind: str, **fields: Any) -> dict[str, Any]:
        item = {"id": f"item_{self._items}", "type": kind, **fields}
        self._items += 1
        return item

    def init(self, record: dict[str, Any]) -> None:
        """`thread.started` and `turn.started`."""
        self._started = True
        self._write({"type": "thread.started", "thread_id": record.get("session_id", "")})
        self._write({"type": "turn.started"})

    def event(self, event: SessionEvent) -> None:
        """The items the event starts, updates or completes (errors also on stderr)."""
        super().event(event)
        match event:
            case AssistantMessageDone(message=message):
                if message.reasoning:
                    item = self._new_item("reasoning", text=message.reasoning)
                    self._write({"type": "item.completed", "item": item})
                if message.content:
                    self._agent_message(message.content)
            case ToolCallStarted(call=call):
                self._call_started(call)
            case ToolCallFinished():
                self._call_finished(event)
            case ErrorEvent(message=message, fatal=False):
                item = self._new_item("error", message=message)
                self._write({"type": "item.completed", "item": item})
            case ErrorEvent(message=message):
                self._fatal = message  # `turn.failed` says it
            case TurnFinished(final_text=text):
                if text and text != self._last_message:
                    self._agent_message(text)
            case _:
                pass

    def _agent_message(self, text: str) -> None:
        self._last_message = text
        self._write({"type": "item.completed", "item": self._new_item("agent_message", text=text)})

    def _call_started(self, call: ToolCall) -> None:
        if call.name in ANSWER_TOOLS or call.name in FILE_TOOLS or call.name == PLAN_TOOL:
            return  # an answer is an agent_message; a file change and a plan come at the end
        if call.name == COMMAND_TOOL:
            command = str(tool_input(call).get("command", call.arguments))
            item = self._new_item(
                "command_execution",
                command=command,
                aggregated_output="",
                exit_code=None,
                status="in_progress",
            )
        else:
            server, tool = _server_and_tool(call.name)
            item = self._new_item(
                "mcp_tool_call",
                server=server,
                tool=tool,
                arguments=tool_input(call),
                result=None,
                error=None,
                status="in_progress",
            )
        self._open[call.id] = item
        self._write({"type": "item.started", "item": item})

    def _call_finished(self, event: ToolCallFinished) -> None:
        call = event.call
        if call.name in ANSWER_TOOLS:
            return
        refused = bool(
            event.metadata.get("denied")
            or event.metadata.get("refused")
            or event.metadata.get("rejected")
        )
        if call.name == PLAN_TOOL:
            self._plan(event)
            return
        if call.name in FILE_TOOLS:
            path = str(event.metadata.get("path") or tool_input(call).get("path", ""))
            kind = "add" if event.result.startswith("created ") else "update"
            change = self._new_item(
                "file_change",
                changes=[{"path": path, "kind": kind}],
                status="failed" if event.is_error else "completed",
            )
            self._write({"type": "item.completed", "item": change})
            return
        item = self._open.pop(call.id, None)
        if item is None:  # refused before it ran: started and completed at once
            self._call_started(call)
            item = self._open.pop(call.id)
        started = is_background_start(event.metadata) if not event.is_error else None
        if item["type"] == "command_execution" and started is not None:
            # It goes on: in progress, its output added as it comes (`background`; ADR 0057).
            self._background[started] = item
            self._write({"type": "item.updated", "item": item})
            return
        if item["type"] == "command_execution":
            status = "declined" if refused else "failed" if event.is_error else "completed"
            item.update(aggregated_output=event.result, exit_code=event.exit_code, status=status)
        elif event.is_error:
            item.update(error={"message": event.result}, status="failed")
        else:
            content = [{"type": "text", "text": event.result}]
            item.update(result={"content": content, "structured_content": None})
            item.update(status="completed")
        self._write({"type": "item.completed", "item": item})

    def _plan(self, event: ToolCallFinished) -> None:
        if event.is_error:
            return
        steps = plan_from_meta(event.metadata.get("plan")) or ()
        items = [{"text": step.step, "completed": step.status is PlanStatus.DONE} for step in steps]
        if self._plan_item is None:
            self._plan_item = self._new_item("todo_list", items=items)
            self._write({"type": "item.started", "item": self._plan_item})
        else:
            self._plan_item["items"] = items
            self._write({"type": "item.updated", "item": self._plan_item})

    def background(self, update: BackgroundUpdate) -> None:
        """A background command's item: `item.updated` with its output so far as it comes,
        then `item.completed` with its exit code (docs/adr/0057)."""
        item = self._background.get(update.command_id)
        if item is None:
            return
        match update:
            case BackgroundLines():
                item["aggregated_output"] += update.text
                self._write({"type": "item.updated", "item": item})
            case BackgroundEnded():
                del self._background[update.command_id]
                status = "completed" if update.exit_code == 0 else "failed"
                item.update(exit_code=update.exit_code, status=status)
                self._write({"type": "item.completed", "item": item})
            case _:
                assert_never(update)

    def finish(self, result: dict[str, Any]) -> None:
        """The plan's completion, then `turn.completed` with the usage or `turn.failed`."""
        if not self._started:
            self.init({"session_id": result.get("session_id", "")})
        if self._plan_item is not None:
            self._write({"type": "item.completed", "item": self._plan_item})
        if result.get("is_error"):
            reason = str(result.get("stop_reason", ""))
            message = f"forge run stopped: {reason} (exit {result.get('exit_code')})"
            if self._fatal:
                message = f"{self._fatal} ({message})"
            self._write({"type": "turn.failed", "error": {"message": message}})
            return
        usage = result.get("usage") or {}
        self._write(
            {
                "type": "turn.completed",
                "usage": {
                    "input_tokens": int(usage.get("input_tokens", 0)),
                    "cached_input_tokens": int(usage.get("cached_input_tokens", 0)),
                    "output_tokens": int(usage.get("output_tokens", 0)),
                },
            }
        )


def _server_and_tool(name: str) -> tuple[str, str]:
    """An MCP tool's server and tool (`server__tool`); Forge's own tools are server `forge`."""
    server, separator, tool = name.partition(SEPARATOR)
    return (server, tool) if separator and tool else (FORGE_SERVER, name)
