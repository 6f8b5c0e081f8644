"""Two consumers of agent output streams, written only from each tool's published schema —
not from Forge's code — to check that `forge run --output-format stream-json|json|codex-json`
reads as those tools' own output does.

- `ClaudeCodeConsumer`: Claude Code's Agent SDK message types (`SDKMessage`: `system`/`init`
  first; `assistant` and `user` messages whose `message.content` holds `text`, `thinking`,
  `tool_use` and `tool_result` blocks; `stream_event` wrapping Anthropic's raw stream events;
  `result` last with `subtype`, `is_error`, `num_turns`, `total_cost_usd`, `usage`
  (`NonNullableUsage`: `input_tokens`, `cache_creation_input_tokens`,
  `cache_read_input_tokens`, `output_tokens`), `modelUsage`, `permission_denials`
  (`tool_name`, `tool_use_id`, `tool_input`) and `errors` on an error subtype). Any other
  `type` is skipped, as the SDK's consumers do with message types they do not know.
- `CodexExecConsumer`: `codex exec --json`'s `ThreadEvent` (codex-rs/exec/src/exec_events.rs):
  `thread.started` first, `turn.started`, `item.started|updated|completed` with a
  `ThreadItem` (`id` + one of the item payloads), `turn.completed` with `Usage` or
  `turn.failed` with an error, `error`. A closed set: an unknown type or item fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CLAUDE_RESULT_SUBTYPES = {
    "success",
    "error_max_turns",
    "error_during_execution",
    "error_max_budget_usd",
    "error_max_structured_output_retries",
}
CLAUDE_USAGE = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
CLAUDE_PERMISSION_MODES = {"default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"}


class SchemaError(AssertionError):
    """The stream does not follow the published schema."""


def _need(condition: bool, what: str) -> None:
    if not condition:
        raise SchemaError(what)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class ClaudeCodeConsumer:
    """Reads a stream-json run as a Claude Code SDK client would."""

    session_id: str = ""
    init: dict[str, Any] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    tool_uses: dict[str, dict[str, Any]] = field(default_factory=dict)
    tool_results: dict[str, dict[str, Any]] = field(default_factory=dict)
    streamed_text: list[str] = field(default_factory=list)
    message_usage: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLAUDE_USAGE, 0))
    result: dict[str, Any] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def read(self, messages: list[dict[str, Any]]) -> ClaudeCodeConsumer:
        """Consume every message of one run."""
        _need(bool(messages), "no message")
        first = messages[0]
        _need(first.get("type") == "system" and first.get("subtype") == "init", "init first")
        for name in ("session_id", "cwd", "model", "permissionMode"):
            _need(isinstance(first.get(name), str), f"init.{name}")
        _need(isinstance(first.get("tools"), list), "init.tools")
        _need(first["permissionMode"] in CLAUDE_PERMISSION_MODES, "init.permissionMode")
        self.init, self.session_id = first, first["session_id"]
        _need(messages[-1].get("type") == "result", "result last")
        for message in messages[1:-1]:
            self._message(message)
        self._result(messages[-1])
        return self

    def _message(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind in ("assistant", "user", "stream_event"):
            _need(message.get("session_id") == self.session_id, f"{kind}.session_id")
            _need("parent_tool_use_id" in message, f"{kind}.parent_tool_use_id")
        if kind == "assistant":
            body = message["message"]
            _need(body.get("role") == "assistant", "assistant role")
            for block in body["content"]:
                if block["type"] == "text":
                    self.text.append(block["text"])
                elif block["type"] == "tool_use":
                    _need(isinstance(block["input"], dict), "tool_use.input is an object")
                    self.tool_uses[block["id"]] = block
                else:
                    _need(block["type"] == "thinking", f"assistant block {block['type']}")
            usage = body["usage"]
            for name in (*CLAUDE_USAGE, "output_tokens"):
                _need(_is_int(usage.get(name, 0)), f"message usage.{name} integer")
                self.message_usage[name] = self.message_usage.get(name, 0) + usage.get(name, 0)
        elif kind == "user":
            for block in message["message"]["content"]:
                _need(block["type"] == "tool_result", "user block is a tool_result")
                _need(block["tool_use_id"] in self.tool_uses, "tool_result answers a tool_use")
                self.tool_results[block["tool_use_id"]] = block
        elif kind == "stream_event":
            event = message["event"]
            if event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta":
                self.streamed_text.append(event["delta"]["text"])
        else:
            self.skipped.append(str(kind))  # not a Claude Code message: ignored

    def _result(self, result: dict[str, Any]) -> None:
        _need(result.get("subtype") in CLAUDE_RESULT_SUBTYPES, f"subtype {result.get('subtype')}")
        _need(isinstance(result.get("is_error"), bool), "is_error")
        _need(_is_int(result.get("num_turns")), "num_turns")
        _need(_is_int(result.get("duration_ms")), "duration_ms")
        _need(_is_int(result.get("duration_api_ms")), "duration_api_ms")
        _need(isinstance(result.get("uuid"), str), "uuid")
        cost = result.get("total_cost_usd")
        _need(cost is None or isinstance(cost, int | float), "total_cost_usd")
        for name in (*CLAUDE_USAGE, "output_tokens"):
            _need(_is_int(result["usage"].get(name)), f"usage.{name} integer")
        for denial in result["permission_denials"]:
            for name in ("tool_name", "tool_use_id", "tool_input"):
                _need(name in denial, f"permission_denials[].{name}")
        for model, usage in result["modelUsage"].items():
            for name in ("inputTokens", "outputTokens", "cacheReadInputTokens"):
                _need(_is_int(usage.get(name)), f"modelUsage[{model}].{name}")
        if result["subtype"] != "success":
            _need(isinstance(result.get("errors"), list), "errors on an error subtype")
        self.result = result

    def read_result(self, result: dict[str, Any]) -> ClaudeCodeConsumer:
        """Consume `--output-format json`'s one object."""
        _need(result.get("type") == "result", "json prints the result")
        self._result(result)
        return self


CODEX_ITEM_FIELDS: dict[str, tuple[str, ...]] = {
    "agent_message": ("text",),
    "plan": ("text",),
    "reasoning": ("text",),
    "command_execution": ("command", "aggregated_output", "exit_code", "status"),
    "file_change": ("changes", "status"),
    "mcp_tool_call": ("server", "tool", "arguments", "result", "error", "status"),
    "collab_tool_call": ("tool", "sender_thread_id", "receiver_thread_ids", "status"),
    "web_search": ("id", "query", "action"),
    "todo_list": ("items",),
    "error": ("message",),
}
CODEX_STATUSES = {
    "command_execution": {"in_progress", "completed", "failed", "declined"},
    "file_change": {"in_progress", "completed", "failed"},
    "mcp_tool_call": {"in_progress", "completed", "failed"},
}


@dataclass
class CodexExecConsumer:
    """Reads a codex-json run as a consumer of `codex exec --json` would."""

    thread_id: str = ""
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    completed: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] | None = None
    failure: str | None = None

    def read(self, events: list[dict[str, Any]]) -> CodexExecConsumer:
        """Consume every event of one run."""
        _need(events[0].get("type") == "thread.started", "thread.started first")
        _need(isinstance(events[0].get("thread_id"), str), "thread_id")
        self.thread_id = events[0]["thread_id"]
        _need(events[1] == {"type": "turn.started"}, "turn.started second")
        for event in events[2:-1]:
            kind = event.get("type")
            if kind in ("item.started", "item.updated", "item.completed"):
                self._item(kind, event["item"])
            elif kind == "error":
                _need(isinstance(event.get("message"), str), "error.message")
            else:
                raise SchemaError(f"unknown event type {kind}")
        last = events[-1]
        if last.get("type") == "turn.completed":
            usage = last["usage"]
            _need(set(usage) == {"input_tokens", "cached_input_tokens", "output_tokens"}, "usage")
            _need(all(_is_int(value) for value in usage.values()), "usage integers")
            self.usage = usage
        else:
            _need(last.get("type") == "turn.failed", "turn.completed or turn.failed last")
            self.failure = last["error"]["message"]
        _need(all(item in self.completed for item in self.items.values()), "every item ends")
        return self

    def _item(self, kind: str, item: dict[str, Any]) -> None:
        _need(isinstance(item.get("id"), str), "item.id")
        item_type = item.get("type")
        _need(item_type in CODEX_ITEM_FIELDS, f"unknown item type {item_type}")
        for name in CODEX_ITEM_FIELDS[str(item_type)]:
            _need(name in item, f"{item_type}.{name}")
        if item_type in CODEX_STATUSES:
            _need(item["status"] in CODEX_STATUSES[str(item_type)], f"{item_type}.status")
        if kind == "item.started":
            _need(item["id"] not in self.items, "an item starts once")
        elif kind == "item.updated":
            _need(item["id"] in self.items, "an update follows the start")
        self.items[item["id"]] = item
        if kind == "item.completed":
            self.completed.append(item)

    def of_type(self, item_type: str) -> list[dict[str, Any]]:
        """The completed items of `item_type`, in order."""
        return [item for item in self.completed if item["type"] == item_type]
