"""`forge run --output-format stream-json` and `json` in Claude Code's message shapes.

stream-json, one JSON message per line on stdout:
- `{"type": "system", "subtype": "init", ...}` literally first (session_id, tools, model, cwd,
  permissionMode; Forge's `forge_mode`, `forge_version` and `sandbox` beside them);
- `assistant` messages (content blocks `thinking`, `text`, `tool_use`; the request's usage
  in Claude's convention) and `user` messages carrying each `tool_result`, a child agent's with
  `parent_tool_use_id` set to its `task` call;
- with `--include-partial-messages`, `stream_event` messages wrapping Anthropic's raw stream
  events (`message_start`, `content_block_start`/`_delta`/`_stop`, `message_delta`,
  `message_stop`) for the text and reasoning as they arrive;
- Forge's other facts (context and summarization, hooks, approvals, MCP servers, errors, a
  turn's end with its costs per kind, live tool output) as Forge's own records
  (forge-jsonl's, `forge.headless.jsonl`), whose types are none of Claude Code's, so a
  Claude Code consumer skips them;
- the `result` last (`forge.headless.claude_result`).

json: that `result` alone, at the end. docs/adr/0015 (addendum) and the README's "Headless and
CI" say which fields are Forge's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from forge.agent.events import (
    AssistantMessageDone,
    MessageDelta,
    ReasoningDelta,
    SubagentEvent,
    ToolCallFinished,
    ToolCallStarted,
    UsageEvent,
)
from forge.headless.claude_result import (
    PERMISSION_MODES,
    RunFacts,
    claude_result,
    claude_usage,
    new_uuid,
    tool_input,
)
from forge.headless.output import JsonLinesWriter, JsonWriter
from forge.headless.result import RunRecorder
from forge.llm.messages import Message
from forge.session.events import SessionEvent

_NO_USAGE = claude_usage(0, 0, 0, 0)


def _models(recorder: RunRecorder | None) -> dict[str, dict[str, Any]]:
    return recorder.models() if recorder is not None else {}


def mcp_server_status(status: str) -> str:
    """A server's status line ("ready (3 tools)", "starting", "failed: …") as Claude Code's
    `connected`, `pending` or `failed`."""
    if status.startswith("ready"):
        return "connected"
    return "pending" if status == "starting" else "failed"


def system_init(
    record: dict[str, Any], mcp_statuses: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Claude Code's `system`/`init` message from Forge's `init` record and the MCP servers'
    status lines (Forge's own line beside Claude Code's status, as `forge_status`)."""
    mode = str(record.get("mode", ""))
    servers = [
        {"name": name, "status": mcp_server_status(line), "forge_status": line}
        for name, line in (mcp_statuses or {}).items()
    ]
    init: dict[str, Any] = {
        "type": "system",
        "subtype": "init",
        "uuid": new_uuid(),
        "session_id": record.get("session_id", ""),
        "cwd": record.get("workspace", ""),
        "tools": list(record.get("tools", ())),
        "mcp_servers": servers,
        "model": record.get("model", ""),
        "permissionMode": PERMISSION_MODES.get(mode, mode),
        "slash_commands": [],
        "apiKeySource": "none",
        "output_style": "default",
        "forge_mode": mode,
        "forge_version": record.get("forge_version", ""),
    }
    if "sandbox" in record:
        init["sandbox"] = record["sandbox"]
    return init


@dataclass
class _Streamed:
    """The raw stream events sent so far for one message being streamed."""

    index: int = -1
    block: str = ""
    """"text" or "thinking": the block open now ("" none)."""


class ClaudeStreamWriter(JsonLinesWriter):
    """stream-json: Claude Code's messages, Forge's records as extras (see the module)."""

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        secrets: Sequence[str] = (),
        *,
        partial_messages: bool = False,
    ) -> None:
        super().__init__(out, err, secrets)
        self.recorder: RunRecorder | None = None
        """The run's figures (`modelUsage`); set by `forge run`."""
        self.mcp_statuses: Callable[[], Mapping[str, str]] | None = None
        """The MCP servers' status lines (`init`'s `mcp_servers`); set by `forge run`."""
        self.facts = RunFacts()
        self._partial_messages = partial_messages
        self._session_id = ""
        self._model = ""
        self._pending: dict[str, Any] | None = None
        """An assistant message waiting for its request's usage (the next event)."""
        self._streams: dict[str | None, _Streamed] = {}

    def _write_pending(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            super()._record(pending)

    def _record(self, record: dict[str, Any]) -> None:
        self._write_pending()
        super()._record(record)

    def _message(self, kind: str, parent: str | None, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": kind,
            **body,
            "parent_tool_use_id": parent,
            "session_id": self._session_id,
            "uuid": new_uuid(),
        }

    def init(self, record: dict[str, Any]) -> None:
        """`system`/`init`, then whatever was held back for it."""
        self._session_id = str(record.get("session_id", ""))
        self._model = str(record.get("model", ""))
        statuses = self.mcp_statuses() if self.mcp_statuses is not None else None
        super().init(system_init(record, statuses))

    def run_started(self, session_id: str, model: str, workspace: str) -> None:
        """Nothing: `system`/`init` said it."""

    def finish(self, result: dict[str, Any]) -> None:
        """Claude Code's `result`, last."""
        super().finish(claude_result(result, _models(self.recorder), self.facts))

    def timed_out(self, seconds: float) -> None:
        """Forge's `error` and `turn_finished` records; the message joins `errors`."""
        self.facts.errors.append(f"no result after {seconds:g} seconds")
        super().timed_out(seconds)

    def interrupted(self, signal_name: str) -> None:
        """Forge's `turn_finished` record; the signal joins `errors`."""
        self.facts.errors.append(f"interrupted ({signal_name})")
        super().interrupted(signal_name)

    def event(self, event: SessionEvent) -> None:
        """The event as Claude Code's message, or as Forge's record when it has no such shape."""
        self.facts.observe(event)
        parent: str | None = None
        inner = event
        while isinstance(inner, SubagentEvent):
            parent, inner = inner.call_id, inner.event
        match inner:
            case MessageDelta(text=text):
                self._stream_delta(parent, "text", text)
            case ReasoningDelta(text=text):
                self._stream_delta(parent, "thinking", text)
            case AssistantMessageDone(message=message):
                self._stream_end(parent, message)
                if message.content or message.reasoning or message.tool_calls:
                    self._record_assistant(parent, message)
            case UsageEvent(usage=usage):
                pending = self._pending
                if pending is not None and pending["parent_tool_use_id"] == parent:
                    pending["message"]["usage"] = claude_usage(
                        usage.prompt_tokens,
                        min(usage.cached_tokens, usage.prompt_tokens),
                        usage.cache_write_tokens,
                        usage.completion_tokens,
                    )
            case ToolCallStarted():
                pass  # the assistant message's `tool_use` block said it
            case ToolCallFinished(call=call, result=text, is_error=is_error):
                block = {
                    "type": "tool_result",
                    "tool_use_id": call.id,
                    "content": text,
                    "is_error": is_error,
                }
                body = {"message": {"role": "user", "content": [block]}}
                self._record(self._message("user", parent, body))
            case _:
                super().event(event)  # folds it into the transcript too
                return
        self.transcript.observe(event)  # the partial answer a timeout's `turn_finished` says

    def _record_assistant(self, parent: str | None, message: Message) -> None:
        content: list[dict[str, Any]] = []
        if message.reasoning:
            content.append({"type": "thinking", "thinking": message.reasoning, "signature": ""})
        if message.content:
            content.append({"type": "text", "text": message.content})
        for call in message.tool_calls:
            content.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": tool_input(call)}
            )
        body = {
            "message": {
                "id": message.id,
                "type": "message",
                "role": "assistant",
                "model": self._model,
                "content": content,
                "stop_reason": "tool_use" if message.tool_calls else "end_turn",
                "stop_sequence": None,
                "usage": dict(_NO_USAGE),
            }
        }
        self._write_pending()
        # Written with the next record: the request's usage comes as the next event.
        self._pending = self._message("assistant", parent, body)

    def _stream_event(self, parent: str | None, event: dict[str, Any]) -> None:
        self._record(self._message("stream_event", parent, {"event": event}))

    def _stream_delta(self, parent: str | None, kind: str, text: str) -> None:
        if not self._partial_messages or not text:
            return
        streamed = self._streams.get(parent)
        if streamed is None:
            streamed = self._streams[parent] = _Streamed()
            message: dict[str, Any] = {
                "id": "",
                "type": "message",
                "role": "assistant",
                "model": self._model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": dict(_NO_USAGE),
            }
            self._stream_event(parent, {"type": "message_start", "message": message})
        if streamed.block != kind:
            if streamed.block:
                self._stream_event(parent, {"type": "content_block_stop", "index": streamed.index})
            streamed.index += 1
            streamed.block = kind
            empty = (
                {"type": "text", "text": ""}
                if kind == "text"
                else {
                    "type": "thinking",
                    "thinking": "",
                    "signature": "",
                }
            )
            self._stream_event(
                parent,
                {"type": "content_block_start", "index": streamed.index, "content_block": empty},
            )
        delta = (
            {"type": "text_delta", "text": text}
            if kind == "text"
            else {"type": "thinking_delta", "thinking": text}
        )
        self._stream_event(
            parent, {"type": "content_block_delta", "index": streamed.index, "delta": delta}
        )

    def _stream_end(self, parent: str | None, message: Message) -> None:
        streamed = self._streams.pop(parent, None)
        if streamed is None:
            return
        if streamed.block:
            self._stream_event(parent, {"type": "content_block_stop", "index": streamed.index})
        stop = "tool_use" if message.tool_calls else "end_turn"
        self._stream_event(
            parent,
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 0},
            },
        )
        self._stream_event(parent, {"type": "message_stop"})


class ClaudeResultWriter(JsonWriter):
    """`--output-format json`: Claude Code's `result` message alone, at the end."""

    def __init__(self, out: TextIO, err: TextIO, secrets: Sequence[str] = ()) -> None:
        super().__init__(out, err, secrets)
        self.recorder: RunRecorder | None = None
        """The run's figures (`modelUsage`); set by `forge run`."""
        self.facts = RunFacts()

    def event(self, event: SessionEvent) -> None:
        """Errors on stderr; the facts the result needs."""
        super().event(event)
        self.facts.observe(event)

    def timed_out(self, seconds: float) -> None:
        """The stderr line; the message joins `errors`."""
        super().timed_out(seconds)
        self.facts.errors.append(f"no result after {seconds:g} seconds")

    def interrupted(self, signal_name: str) -> None:
        """The stderr line; the signal joins `errors`."""
        super().interrupted(signal_name)
        self.facts.errors.append(f"interrupted ({signal_name})")

    def finish(self, result: dict[str, Any]) -> None:
        """Claude Code's `result` (with `init`'s sandbox) as one JSON object."""
        super().finish(claude_result(result, _models(self.recorder), self.facts))
