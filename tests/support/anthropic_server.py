"""A real Anthropic Messages API server on 127.0.0.1 for tests (docs/adr/0037).

Like `openai_server.OpenAIServer`: Starlette + uvicorn in a background thread, scripted replies
in a queue, faults, raw bodies, and every request recorded (parsed and as the raw bytes). It
streams `POST /v1/messages` the way the API does: `message_start`, per block
`content_block_start` / `content_block_delta` / `content_block_stop`, `ping`, `message_delta`,
`message_stop`; a `StreamFailure` sends an `error` event mid-answer.

It checks what the real API checks and a client can get wrong (user and assistant alternate and
start with the user, every `tool_result` answers a `tool_use` of the message before, at most 4
`cache_control` breakpoints, thinking blocks sent back on a tool-use turn when thinking is on),
answering a 400 `invalid_request_error` otherwise.

Prompt caching is simulated: a request's blocks (tools, system, then message blocks, without
their `cache_control` markers) are hashed in order; each breakpoint stores its prefix's hash;
the next request reads the longest prefix found in the cache (`cache_read_input_tokens`),
writes the rest up to its last breakpoint (`cache_creation_input_tokens`), and pays the rest
as `input_tokens`. Tokens are estimated as JSON characters / 4. `clear_cache()` expires it.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.loopback_server import (
    LoopbackServer,
    lowered_headers,
    raw_response,
    text_pieces,
)
from tests.support.openai_server import Raw

# ---------------------------------------------------------------------------------------------
# Replies a test can script


@dataclass
class Use:
    """One tool call (`tool_use` block)."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass
class Search:
    """The API's own tool search in a reply (a `server_tool_use` of `tool_search_tool_bm25`
    and its `tool_search_tool_result`): the query, and the deferred tools it references."""

    query: str
    found: Sequence[str]
    id: str = "srvtoolu_test_1"


@dataclass
class Answer:
    """An assistant reply: optional thinking (with a signature), text, tool calls."""

    text: str = ""
    calls: Sequence[Use] = ()
    thinking: str = ""
    signature: str = "sig-test"
    redacted_thinking: str = ""
    """Data of a `redacted_thinking` block sent after the thinking (empty: none)."""
    stop_reason: str | None = None
    """None: "tool_use" when there are calls, else "end_turn"."""
    output_tokens: int | None = None
    chunk_size: int = 8
    delay: float = 0.0
    search: Search | None = None
    """The API's own tool search, sent before the text (None: none)."""


@dataclass
class Fault:
    """An HTTP error response with an Anthropic error body."""

    status: int
    kind: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        """The body as the API sends it."""
        return {
            "type": "error",
            "error": {"type": self.kind, "message": self.message},
            "request_id": "req_test",
        }


@dataclass
class StreamFailure:
    """Stream `before` (text only) and then an `error` event, as the API does when it fails
    mid-answer (an overload, most often)."""

    before: str = ""
    kind: str = "overloaded_error"
    message: str = "Overloaded"


def RateLimited(retry_after: str | None = "1") -> Fault:
    """HTTP 429 `rate_limit_error` with `retry-after` (seconds)."""
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    return Fault(
        429, "rate_limit_error", "Number of request tokens has exceeded your rate limit", headers
    )


def Overloaded() -> Fault:
    """HTTP 529 `overloaded_error`."""
    return Fault(529, "overloaded_error", "Overloaded")


def BadKey(status: int = 401) -> Fault:
    """HTTP 401 `authentication_error` (or 403 `permission_error`)."""
    if status == 403:
        return Fault(
            403,
            "permission_error",
            "Your API key does not have permission to use the specified resource.",
        )
    return Fault(401, "authentication_error", "invalid x-api-key")


def PromptTooLong(sent: int = 210_000, limit: int = 200_000) -> Fault:
    """HTTP 400: the prompt exceeds the model's window, worded as the API words it."""
    return Fault(
        400, "invalid_request_error", f"prompt is too long: {sent} tokens > {limit} maximum"
    )


def RequestTooLarge() -> Fault:
    """HTTP 413 `request_too_large` (the request's bytes exceed the API's limit)."""
    return Fault(413, "request_too_large", "Request exceeds the maximum allowed number of bytes.")


Reply = Answer | Fault | StreamFailure | Raw
Responder = Callable[["MessagesRequestRecord"], Reply]


# ---------------------------------------------------------------------------------------------
# What the server saw


@dataclass
class MessagesRequestRecord:
    """One request as the server received it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes

    @property
    def model(self) -> str:
        """The model the client asked for."""
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The messages sent."""
        return list(self.body.get("messages") or [])

    @property
    def system(self) -> list[dict[str, Any]]:
        """The system blocks sent (a string system prompt becomes one text block)."""
        system = self.body.get("system") or []
        return [{"type": "text", "text": system}] if isinstance(system, str) else list(system)

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools offered."""
        return list(self.body.get("tools") or [])

    def blocks(self) -> list[dict[str, Any]]:
        """The prompt's blocks in cache order: tools, system, then each message's blocks
        (tagged with the message's role and position)."""
        found: list[dict[str, Any]] = [{"tool": tool} for tool in self.tools]
        found.extend({"system": block} for block in self.system)
        for number, message in enumerate(self.messages):
            content = message.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            for block in content or []:
                found.append({"message": number, "role": message.get("role"), "block": block})
        return found

    def breakpoints(self) -> list[int]:
        """Positions (into `blocks()`) of the blocks that carry `cache_control`."""
        return [
            index
            for index, entry in enumerate(self.blocks())
            if "cache_control"
            in next(iter(v for k, v in entry.items() if k in ("tool", "system", "block")))
        ]

    def prefix_bytes(self, upto: int) -> bytes:
        """The canonical bytes of blocks `0..upto` with the `cache_control` markers removed
        (what the cache compares)."""
        return b"".join(_canonical(entry) for entry in self.blocks()[: upto + 1])

    def text(self) -> str:
        """Every text in the messages, joined (for assertions on what was sent)."""
        parts: list[str] = []
        for entry in self.blocks():
            block = entry.get("block")
            if isinstance(block, dict):
                content = block.get("text") or block.get("content") or ""
                parts.append(content if isinstance(content, str) else json.dumps(content))
        return "\n".join(parts)


def _without_marker(value: dict[str, Any]) -> dict[str, Any]:
    return {key: item for key, item in value.items() if key != "cache_control"}


def _canonical(entry: dict[str, Any]) -> bytes:
    stripped = {
        key: _without_marker(value) if isinstance(value, dict) else value
        for key, value in entry.items()
    }
    return json.dumps(stripped, ensure_ascii=False).encode() + b"\n"


def _tokens(entry: dict[str, Any]) -> int:
    return max(1, len(_canonical(entry)) // 4)


# ---------------------------------------------------------------------------------------------
# Rules the API enforces


def validation_error(body: dict[str, Any]) -> str | None:
    """What the real API would refuse in this request, or None."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    if "max_tokens" not in body:
        return "max_tokens: Field required"
    if messages[0].get("role") != "user":
        return 'messages: first message must use the "user" role'
    markers = 0
    previous: dict[str, Any] | None = None
    thinking_on = (body.get("thinking") or {}).get("type") == "enabled"
    for number, message in enumerate(messages):
        role = message.get("role")
        if previous is not None and previous.get("role") == role:
            return f'messages.{number}: roles must alternate between "user" and "assistant"'
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            if "cache_control" in block:
                markers += 1
            if block.get("type") == "text" and not str(block.get("text", "")).strip():
                return f"messages.{number}: text content blocks must be non-empty"
        if role == "user":
            asked = {
                b.get("id")
                for b in (previous or {}).get("content") or []
                if isinstance(b, dict) and b.get("type") == "tool_use"
            }
            answered = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            for tool_use_id in answered:
                if tool_use_id not in asked:
                    return (
                        f"messages.{number}: unexpected `tool_use_id` found in `tool_result` "
                        f"blocks: {tool_use_id}"
                    )
            if asked and set(answered) != asked:
                return f"messages.{number}: `tool_use` ids were found without `tool_result` blocks"
            kinds = [b.get("type") for b in blocks]
            if "tool_result" in kinds:
                last_result = max(i for i, kind in enumerate(kinds) if kind == "tool_result")
                if any(kind != "tool_result" for kind in kinds[:last_result]):
                    return f"messages.{number}: tool_result blocks must come first"
        previous = message
    problem = _tool_search_error(body)
    if problem is not None:
        return problem
    markers += sum(1 for tool in body.get("tools") or [] if "cache_control" in tool)
    system = body.get("system")
    if isinstance(system, list):
        markers += sum(1 for block in system if "cache_control" in block)
    if markers > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {markers}."
    if thinking_on:
        last_assistant = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
        content = (last_assistant or {}).get("content") or []
        calls_tools = isinstance(content, list) and any(
            b.get("type") == "tool_use" for b in content
        )
        if calls_tools and content[0].get("type") not in ("thinking", "redacted_thinking"):
            return (
                "messages: Expected `thinking` or `redacted_thinking`, but found "
                f"`{content[0].get('type')}`. When `thinking` is enabled, a final "
                "`assistant` message must start with a thinking block."
            )
        budget = (body.get("thinking") or {}).get("budget_tokens", 0)
        if budget >= body.get("max_tokens", 0):
            return "max_tokens must be greater than thinking.budget_tokens"
    return None


def _tool_search_error(body: dict[str, Any]) -> str | None:
    """What the API refuses about deferred tools and its tool search: a deferred tool without
    a tool search tool, a deferred tool search tool, every tool deferred, a reference to a tool
    not in `tools`, a `server_tool_use` without its result in the same message, a call of a
    deferred tool no search has referenced."""
    tools = body.get("tools") or []
    deferred = {str(t.get("name")) for t in tools if t.get("defer_loading")}
    searches = [t for t in tools if str(t.get("type", "")).startswith("tool_search_tool_")]
    if deferred and not searches:
        return "tools: a tool with defer_loading needs a tool search tool in tools"
    if any(t.get("defer_loading") for t in searches):
        return "tools: the tool search tool cannot be deferred"
    if tools and len(deferred) == len(tools):
        return "tools: at least one tool must not be deferred"
    names = {str(t.get("name")) for t in tools}
    referenced: set[str] = set()
    for number, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        uses = [b.get("id") for b in blocks if b.get("type") == "server_tool_use"]
        results = [
            b.get("tool_use_id") for b in blocks if b.get("type") == "tool_search_tool_result"
        ]
        if uses != results:
            return f"messages.{number}: each server_tool_use needs its tool_search_tool_result"
        for block in blocks:
            if block.get("type") == "tool_search_tool_result":
                for reference in (block.get("content") or {}).get("tool_references") or []:
                    name = str(reference.get("tool_name"))
                    if name not in names:
                        return f"messages.{number}: tool reference {name!r} is not in tools"
                    referenced.add(name)
            elif block.get("type") == "tool_use" and block.get("name") in deferred - referenced:
                return f"messages.{number}: tool {block.get('name')!r} is deferred and not loaded"
    return None


# ---------------------------------------------------------------------------------------------
# The server

_ids = itertools.count(1)


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()


def _pieces(text: str, size: int) -> list[str]:
    return text_pieces(text, size) or [""]


class AnthropicServer(LoopbackServer[Reply, MessagesRequestRecord]):
    """The scriptable Messages API server. Use `start()`/`stop()` or the pytest fixture
    `anthropic_server`. The `responder` answers when the queue is empty; by default:
    Answer("ok")."""

    label = "Anthropic"

    def __init__(self) -> None:
        super().__init__()
        self.usage_log: list[dict[str, int]] = []
        """The usage reported for each streamed answer, in order."""
        self.usage_patch: dict[str, Any] = {}
        """Replaces fields of every reported usage (a float or absurd count, as a broken
        gateway sends); a None value drops the field from `message_start`."""
        self._cache: set[str] = set()
        self.models: list[str] = ["claude-haiku-4-5", "claude-sonnet-4-5"]
        """What `GET /v1/models` lists."""
        self.models_requests: list[dict[str, str]] = []
        """The headers of each `GET /v1/models` request."""

    # --- scripting ---------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget queued replies, recorded requests and the cache."""
        super().reset()
        with self._lock:
            self.usage_log.clear()
            self.usage_patch = {}
            self._cache.clear()
            self.models = ["claude-haiku-4-5", "claude-sonnet-4-5"]
            self.models_requests.clear()

    def clear_cache(self) -> None:
        """Expire every cached prefix (the TTL passed)."""
        with self._lock:
            self._cache.clear()

    @property
    def base_url(self) -> str:
        """The URL to configure a client with (the SDK appends /v1/messages)."""
        return f"http://127.0.0.1:{self.port}"

    # --- serving ----------------------------------------------------------------------------
    def _routes(self) -> list[Route]:
        return [
            Route("/v1/messages", self._messages, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
        ]

    def _default_reply(self) -> Reply:
        return Answer("ok")

    # --- the model list ----------------------------------------------------------------------
    async def _models(self, request: Request) -> Response:
        """The Models API's first (and only) page."""
        with self._lock:
            self.models_requests.append(lowered_headers(request))
            ids = list(self.models)
        if not (request.headers.get("x-api-key") or request.headers.get("authorization")):
            return JSONResponse(
                {"type": "error", "error": {"type": "authentication_error", "message": "no key"}},
                status_code=401,
            )
        data = [
            {
                "type": "model",
                "id": model,
                "display_name": model,
                "created_at": "2025-01-01T00:00:00Z",
            }
            for model in ids
        ]
        return JSONResponse(
            {
                "data": data,
                "has_more": False,
                "first_id": ids[0] if ids else None,
                "last_id": ids[-1] if ids else None,
            }
        )

    # --- the cache ---------------------------------------------------------------------------
    def _cache_usage(self, record: MessagesRequestRecord) -> tuple[int, int, int]:
        """(input, cache read, cache write) tokens for a request, updating the cache."""
        blocks = record.blocks()
        hashes: list[str] = []
        running = hashlib.sha256()
        for entry in blocks:
            running.update(_canonical(entry))
            hashes.append(running.copy().hexdigest())
        tokens = [_tokens(entry) for entry in blocks]
        marks = record.breakpoints()
        with self._lock:
            hit = max((i for i, h in enumerate(hashes) if h in self._cache), default=-1)
            self._cache.update(hashes[i] for i in marks)
        read = sum(tokens[: hit + 1])
        last_mark = max(marks, default=-1)
        written = sum(tokens[hit + 1 : last_mark + 1]) if last_mark > hit else 0
        fresh = sum(tokens) - read - written
        return fresh, read, written

    # --- handlers ----------------------------------------------------------------------------
    async def _messages(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            return JSONResponse(Fault(400, "invalid_request_error", "invalid JSON").body(), 400)
        record = MessagesRequestRecord(
            path=request.url.path,
            headers=lowered_headers(request),
            body=body,
            raw=raw,
        )
        self._record(record)
        problem = validation_error(body)
        if problem is not None:
            return JSONResponse(Fault(400, "invalid_request_error", problem).body(), 400)
        reply = self._next_reply(record)
        if getattr(reply, "delay", 0.0):
            await asyncio.sleep(reply.delay)  # type: ignore[union-attr]
        if isinstance(reply, Fault):
            return JSONResponse(reply.body(), status_code=reply.status, headers=reply.headers)
        if isinstance(reply, Raw):
            return raw_response(reply, _iterate)
        if not body.get("stream"):
            return JSONResponse(
                Fault(400, "invalid_request_error", "this loopback server only streams").body(),
                400,
            )
        fresh, read, written = self._cache_usage(record)
        events = self._events(reply, record.model, fresh, read, written)
        return StreamingResponse(_iterate(events), media_type="text/event-stream")

    def _events(
        self, reply: Answer | StreamFailure, model: str, fresh: int, read: int, written: int
    ) -> list[bytes]:
        usage = {
            "input_tokens": fresh,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "output_tokens": 1,
        }
        usage.update(self.usage_patch)
        usage = {key: value for key, value in usage.items() if value is not None}
        start = {
            "type": "message_start",
            "message": {
                "id": f"msg_{next(_ids)}",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": model,
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        }
        events = [_event("message_start", start), _event("ping", {"type": "ping"})]
        if isinstance(reply, StreamFailure):
            if reply.before:
                events += _text_block(0, reply.before, 8)
            error = {"type": "error", "error": {"type": reply.kind, "message": reply.message}}
            return [*events, _event("error", error)]
        index = 0
        if reply.thinking:
            events.append(
                _event(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    },
                )
            )
            for piece in _pieces(reply.thinking, reply.chunk_size):
                delta = {"type": "thinking_delta", "thinking": piece}
                events.append(_delta(index, delta))
            events.append(_delta(index, {"type": "signature_delta", "signature": reply.signature}))
            events.append(_stop(index))
            index += 1
        if reply.redacted_thinking:
            block = {"type": "redacted_thinking", "data": reply.redacted_thinking}
            start_block = {"type": "content_block_start", "index": index, "content_block": block}
            events += [_event("content_block_start", start_block), _stop(index)]
            index += 1
        if reply.search is not None:
            events += _search_blocks(index, reply.search, reply.chunk_size)
            index += 2
        if reply.text:
            events += _text_block(index, reply.text, reply.chunk_size)
            index += 1
        for call in reply.calls:
            block = {
                "type": "tool_use",
                "id": call.id or f"toolu_{next(_ids)}",
                "name": call.name,
                "input": {},
            }
            start_block = {"type": "content_block_start", "index": index, "content_block": block}
            events.append(_event("content_block_start", start_block))
            for piece in _pieces(json.dumps(call.input), reply.chunk_size):
                events.append(_delta(index, {"type": "input_json_delta", "partial_json": piece}))
            events.append(_stop(index))
            index += 1
        stop_reason = reply.stop_reason or ("tool_use" if reply.calls else "end_turn")
        output = reply.output_tokens
        if output is None:
            output = max(1, (len(reply.text) + len(reply.thinking)) // 4 + 10 * len(reply.calls))
        final_usage = {"output_tokens": self.usage_patch.get("output_tokens", output)}
        with self._lock:
            self.usage_log.append({**usage, "output_tokens": output})
        events.append(
            _event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": final_usage,
                },
            )
        )
        events.append(_event("message_stop", {"type": "message_stop"}))
        return events


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return _event(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )


def _stop(index: int) -> bytes:
    return _event("content_block_stop", {"type": "content_block_stop", "index": index})


def _search_blocks(index: int, search: Search, size: int) -> list[bytes]:
    """A `server_tool_use` block (its input streamed) and its `tool_search_tool_result`."""
    use = {"type": "server_tool_use", "id": search.id, "name": "tool_search_tool_bm25", "input": {}}
    events = [
        _event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": use},
        )
    ]
    for piece in _pieces(json.dumps({"query": search.query}), size):
        events.append(_delta(index, {"type": "input_json_delta", "partial_json": piece}))
    events.append(_stop(index))
    result = {
        "type": "tool_search_tool_result",
        "tool_use_id": search.id,
        "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [
                {"type": "tool_reference", "tool_name": name} for name in search.found
            ],
        },
    }
    start = {"type": "content_block_start", "index": index + 1, "content_block": result}
    return [*events, _event("content_block_start", start), _stop(index + 1)]


def _text_block(index: int, text: str, size: int) -> list[bytes]:
    start = {
        "type": "content_block_start",
        "index": index,
        "content_block": {"type": "text", "text": ""},
    }
    events = [_event("content_block_start", start)]
    for piece in _pieces(text, size):
        events.append(_delta(index, {"type": "text_delta", "text": piece}))
    return [*events, _stop(index)]


async def _iterate(events: list[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event
        await asyncio.sleep(0)
