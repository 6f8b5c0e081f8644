"""One provider for every OpenAI-compatible Chat Completions server, over httpx.

OpenAI, OpenRouter, Groq, DeepSeek, Mistral, vLLM, llama.cpp and Ollama all speak this
protocol with small differences; the differences are absorbed by `sse_assembly` (stream
quirks), `sse_reader` (an unterminated last event), `http_errors` (error shapes), a remembered
fallback for servers that reject `stream_options` or `tool_choice`, and a non-streaming retry
when a stream comes back empty (llama-cpp-python's context overflow; docs/adr/0019). Retries
follow `RetryPolicy` and never happen once output reached the caller.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import httpx

import forge
from forge.llm.deferred_transport import DeferredTransport
from forge.llm.errors import LLMError, MalformedStreamError, TransportError
from forge.llm.http_errors import (
    decode_body,
    error_from_response,
    error_from_stream_payload,
    server_message,
)
from forge.llm.messages import Message
from forge.llm.model_list import MODEL_LIST_TIMEOUT, ModelListError, model_ids
from forge.llm.protocols import ToolSpec
from forge.llm.provider_identity import ProviderIdentity
from forge.llm.retry import RetryLoop, RetryPolicy, RetrySink
from forge.llm.sse_assembly import StreamAssembler
from forge.llm.sse_reader import read_events
from forge.llm.stream import (
    Completion,
    MessageDelta,
    ReasoningDelta,
    StreamEvent,
    StreamFinished,
    ToolCallComplete,
    UsageReported,
)
from forge.llm.wire_format import completion_from_body, json_error_text, request_body

_SHORTEST_REDACTED_KEY = 4
"""Shorter "keys" are placeholders; masking them would garble ordinary words."""

_PROBE_TIMEOUT = 5.0
"""Seconds an informational request (`fetch_json`) may take: it is never worth a long wait."""

logger = logging.getLogger(__name__)


_STREAM_DECODER = json.JSONDecoder(strict=False)
"""One decoder for every stream line (`json.loads(strict=False)` would build one per line:
a 5 MB tool call in 9-byte pieces is half a million lines)."""


@dataclass
class _ServerQuirks:
    """What we learned about the server; shared by a provider and all its clones."""

    accepts_stream_options: bool = True
    accepts_tool_choice: bool = True


class _OptionRejected(Exception):
    """The server refused `stream_options` or `tool_choice`; the request is repeated
    without it (the quirk is remembered)."""


class _EmptyStream(Exception):
    """A 200 event stream that ended without a single event: llama-cpp-python answers a
    streamed prompt longer than its window this way. Asked again without streaming, the same
    server states the real error (a 400 context_length_exceeded)."""


def _is_event_stream(response: httpx.Response) -> bool:
    return "text/event-stream" in response.headers.get("content-type", "")


def _transport_error(error: httpx.HTTPError, base_url: str) -> TransportError:
    """A readable TransportError for an httpx failure (httpx messages never hold headers)."""
    if isinstance(error, httpx.TimeoutException):
        return TransportError(f"Timed out talking to {base_url} ({type(error).__name__})")
    detail = str(error) or type(error).__name__
    return TransportError(f"Connection to {base_url} failed: {detail}")


class OpenAICompatibleProvider(ProviderIdentity):
    """A `Provider` and `ModelCloner` for any OpenAI-compatible `/chat/completions` endpoint.

    `client` lets several providers share one connection pool; when omitted the provider
    creates and owns its client and `aclose()` closes it. Clones never close the client.
    The API key is sent only as a Bearer header, and only when it is non-empty (local
    servers such as Ollama need none); it never appears in `repr` or in error messages.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str,
        *,
        client: httpx.AsyncClient | None = None,
        timeout: float = 120,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        tool_choice: str = "auto",
    ) -> None:
        self._model = model
        self._tool_choice = tool_choice
        """Sent as `tool_choice` whenever tools are offered ("" = never sent)."""
        self._base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._timeout = httpx.Timeout(timeout)
        self._owns_client = client is None
        if client is None:  # its transport is made by the first request (docs/adr/0042)
            client = httpx.AsyncClient(timeout=self._timeout, transport=DeferredTransport())
        self._client = client
        self._retry = RetryPolicy(max_retries, backoff_base, backoff_max)
        self._quirks = _ServerQuirks()

    # --- identity ----------------------------------------------------------------------------
    def clone_with_model(
        self,
        model: str,
        *,
        request_timeout: float | None = None,
        max_retries: int | None = None,
    ) -> OpenAICompatibleProvider:
        """A copy sharing the HTTP client, key, base URL and learned server quirks; the
        timeout per request and the retry count are this provider's unless given."""
        clone = copy.copy(self)
        clone._model = model
        clone._owns_client = False
        if request_timeout is not None:
            clone._timeout = httpx.Timeout(request_timeout)
        if max_retries is not None:
            clone._retry = dataclasses.replace(self._retry, max_retries=max_retries)
        return clone

    async def aclose(self) -> None:
        """Close the HTTP client if this provider created it (clones never do)."""
        if self._owns_client:
            await self._client.aclose()

    # --- requests ----------------------------------------------------------------------------
    def _headers(self, *, streaming: bool = False) -> dict[str, str]:
        """The request headers. Callers pass the result straight to httpx and never bind it
        to a local name: a traceback rendered with locals (Textual's crash screen does that)
        would otherwise print the Authorization header."""
        headers = {
            "Content-Type": "application/json",
            "User-Agent": f"forge/{forge.__version__}",
            # OpenRouter shows this as the calling app's name; other servers ignore it.
            "X-Title": "Forge",
        }
        if streaming:
            headers |= {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    @property
    def _endpoint(self) -> str:
        return f"{self._base_url}/chat/completions"

    async def _raise_for_status(self, response: httpx.Response, *, sent: dict[str, Any]) -> None:
        if response.status_code < 400:
            return
        body = decode_body(self._without_key(await response.aread()))
        if response.status_code == 400:
            message = server_message(body, "").lower()
            if "stream_options" in sent and "stream_options" in message:
                self._quirks.accepts_stream_options = False
                raise _OptionRejected()
            # vLLM without --enable-auto-tool-choice: '"auto" tool choice requires ...'.
            if "tool_choice" in sent and ("tool_choice" in message or "tool choice" in message):
                self._quirks.accepts_tool_choice = False
                raise _OptionRejected()
        raise error_from_response(response.status_code, response.headers, body)

    def _body(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        max_tokens: int | None,
        *,
        stream: bool,
        required_tool: str | None = None,
    ) -> dict[str, Any]:
        """The request body, with the options this server is known to accept (`required_tool`
        forces that tool through `tool_choice`, unless the server refused `tool_choice` or the
        settings say never to send it)."""
        tool_choice: str | dict[str, Any] = (
            self._tool_choice if self._quirks.accepts_tool_choice else ""
        )
        if required_tool and self._tool_choice and self._quirks.accepts_tool_choice:
            tool_choice = {"type": "function", "function": {"name": required_tool}}
        return request_body(
            self._model,
            messages,
            tools,
            max_tokens=max_tokens,
            stream=stream,
            include_usage=stream and self._quirks.accepts_stream_options,
            tool_choice=tool_choice or None,
        )

    def _without_key(self, raw: bytes) -> bytes:
        """An error body with the key masked, should the server echo it back: the decoded
        body is then safe even as a local variable in a rendered traceback."""
        if len(self._api_key) < _SHORTEST_REDACTED_KEY:
            return raw
        return raw.replace(self._api_key.encode(), b"***")

    def _redact_key(self, error: LLMError) -> None:
        """Mask the key if a server echoed it back in its error message."""
        if len(self._api_key) >= _SHORTEST_REDACTED_KEY and self._api_key in error.message:
            error.message = error.message.replace(self._api_key, "***")
            error.args = (error.message,)

    def _retries(self) -> RetryLoop:
        """The retry loop of one request (a rejected option asks again at once)."""
        return RetryLoop(
            self._retry,
            self._model,
            self._base_url,
            logger,
            self._redact_key,
            ask_again_on=(_OptionRejected,),
        )

    # --- streaming ---------------------------------------------------------------------------
    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        required_tool: str | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Stream one reply; the last event is always `StreamFinished` (`required_tool`: a
        tool the reply must call, sent as `tool_choice`).

        Retryable failures are retried only while nothing visible has been yielded; each
        retry is announced by a `RetryScheduled` before the wait. After visible output the
        typed error propagates and the caller decides what to keep.
        """

        def attempt() -> tuple[AsyncGenerator[StreamEvent, None], StreamAssembler]:
            assembler = StreamAssembler(self._model)
            events = self._stream_attempt(messages, tools, max_tokens, assembler, required_tool)
            return events, assembler

        async with aclosing(self._retries().stream(attempt)) as events:
            async for event in events:
                yield event

    async def _stream_attempt(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        max_tokens: int | None,
        assembler: StreamAssembler,
        required_tool: str | None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """One attempt at the stream; an empty stream asks again without streaming."""
        try:
            async with aclosing(
                self._stream_once(messages, tools, max_tokens, assembler, required_tool)
            ) as events:
                async for event in events:
                    yield event
        except _EmptyStream:
            # Nothing was shown, so asking again whole is safe; the answer is either the
            # server's real error (raised from here) or a reply, shown as one.
            logger.info("empty stream from %s; asking again without streaming", self._base_url)
            completion = await self._complete_once(messages, tools, max_tokens, required_tool)
            for event in _events_for_completion(completion):
                yield event

    async def _stream_once(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        max_tokens: int | None,
        assembler: StreamAssembler,
        required_tool: str | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        body = self._body(messages, tools, max_tokens, stream=True, required_tool=required_tool)
        try:
            async with self._client.stream(
                "POST",
                self._endpoint,
                json=body,
                headers=self._headers(streaming=True),
                timeout=self._timeout,
            ) as response:
                await self._raise_for_status(response, sent=body)
                if not _is_event_stream(response):
                    # Some servers ignore `stream: true` and answer with one JSON body.
                    completion = self._completion_from_json(await response.aread())
                    for event in _events_for_completion(completion):
                        yield event
                    return
                async with aclosing(self._events_from_sse(response, assembler)) as events:
                    async for event in events:
                        yield event
        except httpx.HTTPError as error:
            raise _transport_error(error, self._base_url) from None

    async def _events_from_sse(
        self, response: httpx.Response, assembler: StreamAssembler
    ) -> AsyncGenerator[StreamEvent, None]:
        saw_done = False
        saw_event = False
        async for sse in read_events(response.aiter_text()):
            saw_event = True
            data = sse.data.strip()
            if sse.event == "error":
                raise error_from_stream_payload(decode_body(data.encode()))
            if not data:
                continue
            if data == "[DONE]":
                saw_done = True
                break
            try:
                chunk = _STREAM_DECODER.decode(data)  # raw control characters pass
            except json.JSONDecodeError as error:
                raise MalformedStreamError(
                    f"The server sent a stream line that is not JSON ({json_error_text(error)})"
                ) from None
            except ValueError:  # an integer of more than 4,300 digits (Python's bound)
                raise MalformedStreamError(
                    "The server sent a stream line with a number too long to read"
                ) from None
            for event in assembler.feed(chunk):
                yield event
        if not saw_event:
            raise _EmptyStream()
        for event in assembler.finish(saw_done=saw_done):
            yield event

    # --- whole replies -----------------------------------------------------------------------
    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        on_retry: RetrySink | None = None,
    ) -> Completion:
        """One whole reply (no streaming), retried like `stream`; `on_retry` is told of each
        retry before the wait."""
        return await self._retries().call(
            lambda: self._complete_once(messages, tools, max_tokens), on_retry
        )

    async def _complete_once(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        max_tokens: int | None,
        required_tool: str | None = None,
    ) -> Completion:
        body = self._body(messages, tools, max_tokens, stream=False, required_tool=required_tool)
        try:
            response = await self._client.post(
                self._endpoint, json=body, headers=self._headers(), timeout=self._timeout
            )
        except httpx.HTTPError as error:
            raise _transport_error(error, self._base_url) from None
        await self._raise_for_status(response, sent=body)
        return self._completion_from_json(response.content)

    # --- what the server says about itself -----------------------------------------------------
    async def list_models(self) -> list[str]:
        """The ids of the models this server offers (`GET {base_url}/models`, sent with the
        provider's own headers and key); ModelListError saying why when it cannot tell."""
        url = f"{self._base_url}/models"
        try:
            response = await self._client.get(
                url, headers=self._headers(), timeout=MODEL_LIST_TIMEOUT
            )
        except httpx.HTTPError as error:
            raise ModelListError(f"could not reach {url} ({type(error).__name__})") from None
        if response.status_code != 200:
            raise ModelListError(f"{url} answered HTTP {response.status_code}")
        try:
            body = json.loads(response.content)
        except ValueError:
            raise ModelListError(f"{url} did not answer with a model list") from None
        return model_ids(body, url)

    async def fetch_json(self, method: str, url: str, body: dict[str, Any] | None = None) -> Any:
        """A JSON answer from an informational endpoint of this server (`/models`, `/props`,
        ...), sent with the provider's headers; None on an error status, a body that is not
        JSON, or no connection. URLs on another host get None: the key stays with its server.
        Used by `forge.llm.window_discovery` (it is a `JsonFetcher`)."""
        if httpx.URL(url).host != httpx.URL(self._base_url).host:
            return None
        try:
            response = await self._client.request(
                method, url, json=body, headers=self._headers(), timeout=_PROBE_TIMEOUT
            )
        except httpx.HTTPError:
            return None
        if response.status_code >= 400:
            return None
        try:
            return json.loads(response.content)
        except ValueError:
            return None

    def _completion_from_json(self, raw: bytes) -> Completion:
        body = decode_body(raw)
        if isinstance(body, dict) and body.get("error") is not None:
            raise error_from_stream_payload(body)
        if not isinstance(body, dict):
            raise MalformedStreamError("The server's reply is not JSON")
        return completion_from_body(body, self._model)


def _events_for_completion(completion: Completion) -> list[StreamEvent]:
    """The events a stream would have produced for a reply that arrived whole."""
    message = completion.message
    events: list[StreamEvent] = []
    if message.reasoning:
        events.append(ReasoningDelta(message.reasoning))
    if message.content:
        events.append(MessageDelta(message.content))
    events.extend(ToolCallComplete(index, call) for index, call in enumerate(message.tool_calls))
    if completion.usage is not None:
        events.append(UsageReported(completion.usage))
    events.append(StreamFinished(completion))
    return events
