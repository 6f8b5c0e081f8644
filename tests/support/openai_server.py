"""A real OpenAI-compatible Chat Completions server on 127.0.0.1 for tests and benchmarks.

Built on Starlette + uvicorn, running in a background thread with its own event loop. Tests
script it: queue replies (text, tool calls, chunking), add latency, inject faults (HTTP errors
with Retry-After, disconnects mid-stream, malformed JSON, slow streams; `RateLimited`,
`QuotaExhausted`, `ContextOverflow` and `ServerFault` build the usual ones), replay recorded
`.sse`/`.json` bodies byte for byte (with the status and content type their `.meta.json` or
`.headers.txt` recorded), or answer with a `responder` function. A `guard` answers before the
queue (a server's rules about requests); server-wide switches reproduce real servers' habits
(no usage or all-zero usage, tool calls only when `tool_choice` is sent, rejecting
`tool_choice`), and `info` scripts the endpoints that state a model's context window
(`/v1/models`, `/model/info`, `/props`, `/api/show`). Every request is recorded.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
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

# ---------------------------------------------------------------------------------------------
# Replies a test can script


@dataclass
class Text:
    """A plain assistant answer, streamed in `chunk_size`-character pieces."""

    text: str
    reasoning: str = ""
    chunk_size: int = 8
    finish_reason: str | None = "stop"
    prompt_tokens: int | None = None
    """Reported prompt tokens; None = a rough estimate of the request (chars / 4)."""
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    """Reported as `prompt_tokens_details.cached_tokens` (None: no details sent)."""
    delay: float = 0.0
    """Seconds to wait before the response starts."""
    chunk_delay: float = 0.0
    """Seconds to wait between stream chunks."""


@dataclass
class Call:
    """One tool call in a `ToolCalls` reply."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass
class ToolCalls:
    """An assistant message with tool calls (and optional text first)."""

    calls: Sequence[Call]
    text: str = ""
    chunk_size: int = 12
    finish_reason: str | None = "tool_calls"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0


@dataclass
class Fault:
    """An HTTP error response."""

    status: int
    body: dict[str, Any] | str = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Disconnect:
    """Stream `reply` but cut the connection after `after_chunks` chunks."""

    reply: Text | ToolCalls
    after_chunks: int = 2


@dataclass
class Raw:
    """Send these bytes as an SSE body, unchanged."""

    body: bytes
    status: int = 200
    content_type: str = "text/event-stream"
    delay: float = 0.0
    split_every: int | None = None
    """Write the body in pieces of this many bytes (to split UTF-8 and lines across reads)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (a replayed 429's Retry-After, say)."""


def recorded_response(path: Path | str) -> tuple[int, str | None]:
    """The HTTP status and content type the `.meta.json` beside a recorded body lists for it.

    Recordings are named `<cassette>.<n>.sse|json` beside `<cassette>.meta.json`; without a
    meta file (or an entry for this body) the answer is `(200, None)`.
    """
    path = Path(path)
    meta = path.with_name(f"{path.name.split('.', 1)[0]}.meta.json")
    if not meta.is_file():
        return 200, None
    for interaction in json.loads(meta.read_text(encoding="utf-8")).get("interactions", []):
        if interaction.get("file") == path.name:
            content_types = (interaction.get("response_headers") or {}).get("content-type")
            content_type = content_types[0] if content_types else None
            return int(interaction["status"]["code"]), content_type
    return 200, None


def captured_headers_path(path: Path | str) -> Path:
    """The `.headers.txt` beside a body captured from local server software
    (`<stem>.sse` or `<stem>.body.json` beside `<stem>.headers.txt`)."""
    path = Path(path)
    stem = path.name.removesuffix(".sse").removesuffix(".body.json")
    return path.with_name(f"{stem}.headers.txt")


def captured_response(path: Path | str) -> tuple[int, str | None]:
    """The status and content type a `.headers.txt` capture lists (`(200, None)` without one)."""
    headers = captured_headers_path(path)
    if not headers.is_file():
        return 200, None
    lines = headers.read_text(encoding="utf-8").splitlines()
    status = int(lines[0].split()[1])
    content_type = next(
        (
            line.split(":", 1)[1].strip()
            for line in lines[1:]
            if line.lower().startswith("content-type:")
        ),
        None,
    )
    return status, content_type


def Replay(path: Path | str, *, split_every: int | None = None) -> Raw:
    """Replay a recorded `.sse` stream or `.json` body byte for byte, with the HTTP status and
    content type its `.meta.json` or `.headers.txt` recorded (200 and the usual type when none
    was recorded)."""
    data = Path(path).read_bytes()
    status, content_type = recorded_response(path)
    if captured_headers_path(path).is_file():
        status, content_type = captured_response(path)
    default_type = "application/json" if str(path).endswith(".json") else "text/event-stream"
    return Raw(
        data, status=status, content_type=content_type or default_type, split_every=split_every
    )


def MalformedJSON() -> Raw:
    """A stream whose first data line is not JSON."""
    return Raw(b'data: {"id": "x", "choices": [\n\n')


def _error(message: str, kind: str, code: str | None) -> dict[str, Any]:
    """An error body shaped the way OpenAI sends one."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def RateLimited(retry_after: str | None = None, *, retry_after_ms: str | None = None) -> Fault:
    """HTTP 429 rate limit, with `Retry-After` (seconds or an HTTP date) and/or OpenAI's
    `retry-after-ms` when given."""
    headers = {}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    if retry_after_ms is not None:
        headers["retry-after-ms"] = retry_after_ms
    body = _error("Rate limit reached for requests", "requests", "rate_limit_exceeded")
    return Fault(429, body, headers=headers)


def QuotaExhausted() -> Fault:
    """HTTP 429 `insufficient_quota`: out of credit, which a client must not retry."""
    message = "You exceeded your current quota, please check your plan and billing details."
    return Fault(429, _error(message, "insufficient_quota", "insufficient_quota"))


def ContextOverflow(limit: int = 8192, sent: int = 9000) -> Fault:
    """HTTP 400 `context_length_exceeded`, worded as OpenAI words it."""
    message = (
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {sent} tokens. Please reduce the length of the messages."
    )
    return Fault(400, _error(message, "invalid_request_error", "context_length_exceeded"))


def ServerFault(status: int = 500) -> Fault:
    """A 5xx server error."""
    message = "The server had an error while processing your request."
    return Fault(status, _error(message, "server_error", None))


Reply = Text | ToolCalls | Fault | Disconnect | Raw
Responder = Callable[["RecordedRequest"], Reply]
Guard = Callable[["RecordedRequest"], "Reply | None"]


@dataclass
class Info:
    """A JSON answer on one of the model-information endpoints (`OpenAIServer.info`)."""

    body: dict[str, Any] | str
    status: int = 200
    delay: float = 0.0


# ---------------------------------------------------------------------------------------------
# What the server saw


@dataclass
class RecordedRequest:
    """One request as the server received it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    started_at: float
    finished_at: float | None = None
    raw: bytes = b""
    """The body's bytes as they arrived (to compare what two requests share)."""

    @property
    def model(self) -> str:
        """The model the client asked for."""
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The messages the client sent."""
        return list(self.body.get("messages") or [])

    @property
    def stream(self) -> bool:
        """Whether the client asked for a stream."""
        return bool(self.body.get("stream"))

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools the client offered."""
        return list(self.body.get("tools") or [])

    def text(self) -> str:
        """All message contents joined (for assertions on what was sent)."""
        return "\n".join(str(m.get("content") or "") for m in self.messages)


# ---------------------------------------------------------------------------------------------
# The server


_ids = itertools.count(1)


def _estimate_prompt_tokens(body: dict[str, Any]) -> int:
    return max(1, len(json.dumps(body.get("messages") or [])) // 4)


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _sse(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def _call_id(call: Call) -> str:
    return call.id or f"call_{next(_ids)}"


def _arguments_text(call: Call) -> str:
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


def _usage(reply: Text | ToolCalls, body: dict[str, Any], mode: str = "reported") -> dict[str, Any]:
    if mode == "zero":
        return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    prompt = (
        reply.prompt_tokens if reply.prompt_tokens is not None else _estimate_prompt_tokens(body)
    )
    text = reply.text + "".join(
        _arguments_text(c) for c in (reply.calls if isinstance(reply, ToolCalls) else ())
    )
    completion = (
        reply.completion_tokens if reply.completion_tokens is not None else max(1, len(text) // 4)
    )
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if reply.cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    return usage


def stream_chunks(
    reply: Text | ToolCalls, body: dict[str, Any], usage_mode: str = "reported"
) -> list[bytes]:
    """The SSE events (each `data: …\\n\\n`) for a scripted reply, ending with [DONE].
    `usage_mode` as `OpenAIServer.usage_mode`."""
    model = str(body.get("model", "test-model"))
    events: list[bytes] = [_sse(_chunk(model, {"role": "assistant", "content": ""}))]
    if isinstance(reply, Text) and reply.reasoning:
        for piece in text_pieces(reply.reasoning, reply.chunk_size):
            events.append(_sse(_chunk(model, {"reasoning_content": piece})))
    for piece in text_pieces(reply.text, reply.chunk_size):
        events.append(_sse(_chunk(model, {"content": piece})))
    if isinstance(reply, ToolCalls):
        for index, call in enumerate(reply.calls):
            call_id = _call_id(call)
            head = {"index": index, "id": call_id, "type": "function"}
            head["function"] = {"name": call.name, "arguments": ""}
            events.append(_sse(_chunk(model, {"tool_calls": [head]})))
            for piece in text_pieces(_arguments_text(call), reply.chunk_size):
                delta = {"index": index, "function": {"arguments": piece}}
                events.append(_sse(_chunk(model, {"tool_calls": [delta]})))
    events.append(_sse(_chunk(model, {}, reply.finish_reason)))
    options = body.get("stream_options") or {}
    if options.get("include_usage") and usage_mode != "none":
        usage_chunk = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "choices": [],
            "usage": _usage(reply, body, usage_mode),
        }
        events.append(_sse(usage_chunk))
    events.append(_sse("[DONE]"))
    return events


def completion_body(
    reply: Text | ToolCalls, body: dict[str, Any], usage_mode: str = "reported"
) -> dict[str, Any]:
    """A non-streaming Chat Completions response for a scripted reply (`usage_mode` as
    `OpenAIServer.usage_mode`)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if isinstance(reply, Text) and reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if isinstance(reply, ToolCalls):
        message["tool_calls"] = [
            {
                "id": _call_id(call),
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments_text(call)},
            }
            for call in reply.calls
        ]
    answer = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model", "test-model"),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": _usage(reply, body, usage_mode),
    }
    if usage_mode == "none":
        del answer["usage"]
    return answer


def as_plain_text(reply: ToolCalls) -> Text:
    """What a server that emits tool calls only when `tool_choice` is sent streams instead:
    the calls as plain text (llama-cpp-python's `chatml-function-calling`)."""
    calls = " ".join(f"{call.name}({_arguments_text(call)})" for call in reply.calls)
    return Text(" ".join(part for part in (reply.text, calls) if part), delay=reply.delay)


class _CutConnection(Exception):
    """Raised inside a streaming body to make uvicorn drop the connection."""


class OpenAIServer(LoopbackServer[Reply, RecordedRequest]):
    """The scriptable server. Use `start()`/`stop()` or the pytest fixture `llm_server`. The
    `responder` answers when the queues are empty; by default: Text("ok")."""

    label = "OpenAI"

    def __init__(self) -> None:
        super().__init__()
        self._model_queues: dict[str, deque[Reply]] = {}
        self.reject_stream_options = False
        """When True, a request carrying stream_options gets HTTP 400 (old servers do this)."""
        self.reject_tool_choice = False
        """When True, a request carrying tool_choice gets HTTP 400 (vLLM without
        --enable-auto-tool-choice)."""
        self.tool_calls_need_tool_choice = False
        """When True, a scripted ToolCalls reply to a request without tool_choice is streamed
        as plain text (llama-cpp-python's chatml-function-calling)."""
        self.usage_mode = "reported"
        """"reported" (usage when asked for), "none" (never: llama-cpp-python ignores
        include_usage) or "zero" (all-zero usage, as LitServe reports)."""
        self.guard: Guard | None = None
        """Checked before the queue: a reply it returns answers the request (the queue is
        left as it is); None lets the queue answer."""
        self.info: dict[str, Info] = {}
        """Answers for model-information endpoints by path ("/v1/models", "/v1/model/info",
        "/props", "/api/show", ...); GET or POST. Unlisted paths: 404, except the default
        "/v1/models" listing."""
        self.info_requests: list[RecordedRequest] = []
        """Requests to the model-information endpoints."""
        self.active = 0
        self.max_active = 0
        """The most requests that were in flight at once (proves concurrency)."""
        self.cancelled_streams = 0
        """Streams whose client went away before the end."""

    # --- scripting ---------------------------------------------------------------------------
    def enqueue_for(self, model: str, *replies: Reply) -> None:
        """Answer the next requests that name `model` with these replies, in order (before
        the shared queue; requests for other models do not take them)."""
        with self._lock:
            self._model_queues.setdefault(model, deque()).extend(replies)

    def reset(self) -> None:
        """Forget queued replies, recorded requests and settings."""
        super().reset()
        with self._lock:
            self._model_queues.clear()
            self.reject_stream_options = False
            self.reject_tool_choice = False
            self.tool_calls_need_tool_choice = False
            self.usage_mode = "reported"
            self.guard = None
            self.info = {}
            self.info_requests.clear()
            self.active = 0
            self.max_active = 0
            self.cancelled_streams = 0

    @property
    def pending(self) -> int:
        """Replies still queued (the shared queue and every model's)."""
        with self._lock:
            return len(self._queue) + sum(len(queue) for queue in self._model_queues.values())

    @property
    def base_url(self) -> str:
        """The URL to configure a client with (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def requests_for(self, model: str) -> list[RecordedRequest]:
        """The recorded requests that named this model."""
        return [r for r in list(self.requests) if r.model == model]

    # --- serving ----------------------------------------------------------------------------
    def _routes(self) -> list[Route]:
        return [
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/{path:path}", self._info_endpoint, methods=["GET", "POST"]),
        ]

    def _default_reply(self) -> Reply:
        return Text("ok")

    def _take_queued(self, record: RecordedRequest) -> Reply | None:
        own = self._model_queues.get(record.model)
        if own:
            return own.popleft()
        return super()._take_queued(record)

    # --- handlers ----------------------------------------------------------------------------
    async def _info_endpoint(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {}
        path = request.url.path
        with self._lock:
            self.info_requests.append(
                RecordedRequest(
                    path=path,
                    headers=lowered_headers(request),
                    body=body if isinstance(body, dict) else {},
                    started_at=time.monotonic(),
                )
            )
            answer = self.info.get(path)
        if answer is None:
            if path == "/v1/models":
                listing = {"object": "list", "data": [{"id": "test-model", "object": "model"}]}
                return JSONResponse(listing)
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        if answer.delay:
            await asyncio.sleep(answer.delay)
        content = answer.body if isinstance(answer.body, str) else json.dumps(answer.body)
        return Response(content, status_code=answer.status, media_type="application/json")

    async def _chat(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            return JSONResponse({"error": {"message": "invalid JSON body"}}, status_code=400)
        recorded = RecordedRequest(
            path=request.url.path,
            headers=lowered_headers(request),
            body=body,
            started_at=time.monotonic(),
            raw=raw,
        )
        with self._lock:
            self.requests.append(recorded)
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            if self.reject_stream_options and "stream_options" in body:
                return JSONResponse(
                    {"error": {"message": "Unrecognized request argument: stream_options"}},
                    status_code=400,
                )
            if self.reject_tool_choice and "tool_choice" in body:
                message = (
                    '"auto" tool choice requires --enable-auto-tool-choice and '
                    "--tool-call-parser to be set"
                )
                # vLLM's own error shape: the fields at the top level, no "error" object.
                vllm_error = {"object": "error", "message": message, "type": "BadRequestError"}
                return JSONResponse(vllm_error | {"param": None, "code": 400}, status_code=400)
            guarded = self.guard(recorded) if self.guard is not None else None
            reply = guarded if guarded is not None else self._next_reply(recorded)
            if (
                self.tool_calls_need_tool_choice
                and isinstance(reply, ToolCalls)
                and "tool_choice" not in body
            ):
                reply = as_plain_text(reply)
            return await self._respond(reply, body, recorded)
        finally:
            with self._lock:
                self.active -= 1

    async def _respond(self, reply: Reply, body: dict[str, Any], rec: RecordedRequest) -> Response:
        delay = getattr(reply, "delay", 0.0) if not isinstance(reply, Disconnect) else 0.0
        if delay:
            await asyncio.sleep(delay)
        if isinstance(reply, Fault):
            rec.finished_at = time.monotonic()
            content = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
            return Response(
                content,
                status_code=reply.status,
                headers=reply.headers,
                media_type="application/json",
            )
        if isinstance(reply, Raw):
            return self._stream_bytes(reply, rec)
        inner = reply.reply if isinstance(reply, Disconnect) else reply
        if not body.get("stream"):
            rec.finished_at = time.monotonic()
            return JSONResponse(completion_body(inner, body, self.usage_mode))
        chunks = stream_chunks(inner, body, self.usage_mode)
        cut_after = reply.after_chunks if isinstance(reply, Disconnect) else None
        return StreamingResponse(
            self._body(chunks, inner.chunk_delay, cut_after, rec),
            media_type="text/event-stream",
        )

    def _stream_bytes(self, reply: Raw, rec: RecordedRequest) -> Response:
        response = raw_response(reply, lambda pieces: self._body(pieces, 0.0, None, rec))
        if not isinstance(response, StreamingResponse):
            rec.finished_at = time.monotonic()
        return response

    async def _body(
        self, chunks: list[bytes], chunk_delay: float, cut_after: int | None, rec: RecordedRequest
    ) -> AsyncIterator[bytes]:
        finished = False
        try:
            for number, chunk in enumerate(chunks):
                if cut_after is not None and number >= cut_after:
                    raise _CutConnection()
                if chunk_delay and number:
                    await asyncio.sleep(chunk_delay)
                yield chunk
            finished = True
        finally:
            rec.finished_at = time.monotonic()
            if not finished:
                with self._lock:
                    self.cancelled_streams += 1
