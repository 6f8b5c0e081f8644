"""Assemble a Messages API event stream into Forge's stream events (docs/adr/0037).

The API streams `message_start` (the usage of the prompt: input, cache read, cache write),
then per content block `content_block_start`, `content_block_delta`s (`text_delta`,
`thinking_delta`, `signature_delta`, `input_json_delta`) and `content_block_stop`, then
`message_delta` (stop reason, output tokens) and `message_stop`; `ping` may come anywhere and
an `error` event ends the stream (the provider raises it). Events arrive here as plain dicts,
so the assembler is a pure state machine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from forge.llm.anthropic_wire import (
    SERVER_BLOCK_TYPES,
    SERVER_BLOCKS_META_KEY,
    THINKING_META_KEY,
)
from forge.llm.errors import MalformedStreamError
from forge.llm.messages import Message, ToolCall
from forge.llm.stream import (
    Completion,
    MessageDelta,
    ReasoningDelta,
    StreamEvent,
    ToolCallComplete,
    Usage,
    UsageReported,
)
from forge.llm.usage_bounds import checked_count
from forge.unicode_repair import StreamRepair, repaired

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "pause_turn": "stop",
}
"""Anthropic's stop reasons in Forge's (Chat Completions) vocabulary."""


USAGE_FIELDS = (
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "output_tokens",
)


def usage_from(raw: dict[str, Any]) -> Usage | None:
    """Forge's usage for the API's: prompt tokens are input + cache read + cache write, so
    the gauge and the budget see the whole prompt. None when a count is not a trusted token
    count (`forge.llm.usage_bounds`, logged) or no prompt was counted: the request's cost is
    then estimated from Forge's own counts, as for a server that reports no usage."""
    counts = [checked_count(raw.get(name), name) for name in USAGE_FIELDS]
    if any(
        count is None and raw.get(name) is not None
        for count, name in zip(counts, USAGE_FIELDS, strict=True)
    ):
        return None
    fresh, read, written, output = (count or 0 for count in counts)
    prompt = fresh + read + written
    if prompt <= 0:
        return None
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=output,
        total_tokens=prompt + output,
        cached_tokens=read,
        cache_write_tokens=written,
    )


@dataclass
class _Block:
    kind: str
    text: list[str] = field(default_factory=list)
    signature: str = ""
    data: str = ""
    tool_id: str = ""
    tool_name: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    """A server-tool block as the API started it (kept and sent back whole)."""
    finished: bool = False
    repair: StreamRepair = field(default_factory=lambda: StreamRepair("the model server"))


class MessagesStreamAssembler:
    """Feed it the stream's events in order (`feed`); read `completion()` at the end."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.output_started = False
        """Whether anything visible (text, thinking, a tool call) was handed out."""
        self.stopped = False
        """Whether `message_stop` arrived."""
        self._blocks: dict[int, _Block] = {}
        self._usage: dict[str, Any] = {}
        self._stop_reason: str | None = None
        self._tool_calls = 0

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """The Forge events one API event produces."""
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.model = str(message.get("model") or self.model)
            self._usage.update(message.get("usage") or {})
            return []
        if kind == "content_block_start":
            return self._start(event)
        if kind == "content_block_delta":
            return self._delta(event)
        if kind == "content_block_stop":
            return self._stop(event)
        if kind == "message_delta":
            delta = event.get("delta") or {}
            if delta.get("stop_reason"):
                self._stop_reason = str(delta["stop_reason"])
            # Cumulative counts: a later report replaces an earlier one, field by field.
            usage = event.get("usage") or {}
            self._usage.update({key: value for key, value in usage.items() if value is not None})
            reported = usage_from(self._usage)
            return [UsageReported(reported)] if reported is not None else []
        if kind == "message_stop":
            self.stopped = True
        return []  # ping, and event types added to the API later

    def _block(self, event: dict[str, Any]) -> _Block:
        index = event.get("index")
        block = self._blocks.get(index) if isinstance(index, int) else None
        if block is None:
            raise MalformedStreamError(f"The server sent a delta for unknown block {index!r}")
        return block

    def _start(self, event: dict[str, Any]) -> list[StreamEvent]:
        index = event.get("index")
        raw = event.get("content_block") or {}
        if not isinstance(index, int):
            raise MalformedStreamError("The server sent a content block without an index")
        block = _Block(kind=str(raw.get("type") or "text"))
        self._blocks[index] = block
        if block.kind == "tool_use":
            block.tool_id = repaired(str(raw.get("id") or ""), "the model server")
            block.tool_name = repaired(str(raw.get("name") or ""), "the model server")
            initial = raw.get("input")
            if isinstance(initial, dict) and initial:
                block.text.append(json.dumps(initial))
        elif block.kind in SERVER_BLOCK_TYPES:
            # The API's own tool search (`server_tool_use`, its input streamed as JSON) and its
            # result: nothing to show, kept to be sent back (docs/adr/0054).
            block.raw = dict(raw)
            initial = raw.get("input")
            if block.kind == "server_tool_use" and isinstance(initial, dict) and initial:
                block.text.append(json.dumps(initial))
        elif block.kind == "redacted_thinking":
            block.data = str(raw.get("data") or "")
        elif block.kind in ("text", "thinking"):
            text = block.repair.feed(str(raw.get(block.kind) or ""))
            if text:
                block.text.append(text)
                self.output_started = True
                return [MessageDelta(text) if block.kind == "text" else ReasoningDelta(text)]
        return []

    def _delta(self, event: dict[str, Any]) -> list[StreamEvent]:
        block = self._block(event)
        delta = event.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta":
            text = block.repair.feed(str(delta.get("text") or ""))
            block.text.append(text)
            self.output_started = self.output_started or bool(text)
            return [MessageDelta(text)] if text else []
        if kind == "thinking_delta":
            text = block.repair.feed(str(delta.get("thinking") or ""))
            block.text.append(text)
            self.output_started = self.output_started or bool(text)
            return [ReasoningDelta(text)] if text else []
        if kind == "signature_delta":
            block.signature += str(delta.get("signature") or "")
        elif kind == "input_json_delta":
            block.text.append(block.repair.feed(str(delta.get("partial_json") or "")))
        return []

    def _stop(self, event: dict[str, Any]) -> list[StreamEvent]:
        block = self._block(event)
        block.finished = True
        rest = block.repair.flush()
        if rest:
            block.text.append(rest)
        if block.kind != "tool_use":
            if rest and block.kind in ("text", "thinking"):
                return [MessageDelta(rest) if block.kind == "text" else ReasoningDelta(rest)]
            return []
        self.output_started = True
        call = ToolCall(block.tool_id, block.tool_name, "".join(block.text) or "{}")
        index = self._tool_calls
        self._tool_calls += 1
        return [ToolCallComplete(index, call)]

    def completion(self) -> Completion:
        """The whole reply assembled so far."""
        ordered = [self._blocks[index] for index in sorted(self._blocks)]
        text = "".join("".join(b.text) for b in ordered if b.kind == "text")
        reasoning = "".join("".join(b.text) for b in ordered if b.kind == "thinking")
        calls = tuple(
            ToolCall(b.tool_id, b.tool_name, "".join(b.text) or "{}")
            for b in ordered
            if b.kind == "tool_use"
        )
        kept: list[dict[str, Any]] = []
        for b in ordered:
            if b.kind == "thinking" and b.signature:
                kept.append(
                    {"type": "thinking", "thinking": "".join(b.text), "signature": b.signature}
                )
            elif b.kind == "redacted_thinking" and b.data:
                kept.append({"type": "redacted_thinking", "data": b.data})
        meta: dict[str, Any] = {THINKING_META_KEY: kept} if kept else {}
        if server := [_server_block(b) for b in ordered if b.kind in SERVER_BLOCK_TYPES]:
            meta[SERVER_BLOCKS_META_KEY] = server
        message = Message(
            role="assistant", content=text, tool_calls=calls, reasoning=reasoning, meta=meta
        )
        usage = usage_from(self._usage) if self._usage else None  # None: estimated later
        finish = STOP_REASONS.get(self._stop_reason or "", self._stop_reason)
        return Completion(message=message, usage=usage, finish_reason=finish, model=self.model)


def _server_block(block: _Block) -> dict[str, Any]:
    """A server-tool block as the API sent it, its streamed input joined."""
    kept = dict(block.raw)
    if block.kind == "server_tool_use":
        text = "".join(block.text).strip()
        try:
            value = json.loads(text) if text else kept.get("input") or {}
        except json.JSONDecodeError as error:
            message = f"The server sent a broken server-tool input: {error}"
            raise MalformedStreamError(message) from None
        kept["input"] = value if isinstance(value, dict) else {}
    return kept
