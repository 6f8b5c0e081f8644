"""A provider for the Anthropic Messages API, over the official `anthropic` SDK (docs/adr/0037).

The SDK does the HTTP and the SSE framing; its own retries are off (`max_retries=0`) because
Forge's `RetryPolicy` decides, the same way for every provider: retry only while nothing visible
has been yielded. Requests are built by `anthropic_wire` (shape) and `anthropic_cache`
(breakpoints), the stream is assembled by `anthropic_stream`, and errors become Forge's typed
errors through the same `http_errors` functions the OpenAI-compatible provider uses (Anthropic's
error bodies nest `{"error": {"type", "message"}}` the way they expect).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import logging
import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

import forge
from forge.llm.anthropic_cache import CacheTtl, with_breakpoints
from forge.llm.anthropic_stream import MessagesStreamAssembler
from forge.llm.anthropic_wire import last_turn_lacks_thinking, to_messages_request
from forge.llm.errors import (
    AuthenticationError,
    LLMError,
    MalformedStreamError,
    TransportError,
)
from forge.llm.http_errors import error_from_response, error_from_stream_payload
from forge.llm.messages import Message
from forge.llm.model_info import MAXIMUM_REPLY_HEADROOM, max_output_tokens
from forge.llm.model_list import MODEL_LIST_TIMEOUT, ModelListError
from forge.llm.protocols import ToolSpec
from forge.llm.provider_identity import ProviderIdentity
from forge.llm.retry import RetryLoop, RetryPolicy, RetrySink
from forge.llm.stream import Completion, RetryScheduled, StreamEvent, StreamFinished

if TYPE_CHECKING:
    import anthropic

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
"""The API's own address (the SDK appends `/v1/messages`)."""

KEY_FIX = "check the API key: ANTHROPIC_API_KEY or llm.api_key"
"""What a 401/403 tells the user to do."""

_SHORTEST_REDACTED_KEY = 4

logger = logging.getLogger(__name__)


def sdk_base_url(base_url: str) -> str:
    """The base URL as the SDK wants it: without a trailing `/v1` (the SDK adds `/v1/...`),
    so `https://api.anthropic.com` and `https://api.anthropic.com/v1` both work."""
    url = base_url.strip().rstrip("/")
    return url.removesuffix("/v1") or ANTHROPIC_BASE_URL


def _body_of(error: anthropic.APIStatusError) -> Any:
    body = error.body
    if body is None:
        try:
            return error.response.json()
        except ValueError:
            return error.response.text
    return body


def _typed_error(error: anthropic.APIError, base_url: str) -> LLMError:
    """Forge's typed error for an SDK error (messages built from the server's reply only)."""
    import anthropic

    if isinstance(error, anthropic.APITimeoutError):
        return TransportError(f"Timed out talking to {base_url}")
    if isinstance(error, anthropic.APIConnectionError):
        cause = error.__cause__
        detail = str(cause) if cause is not None and str(cause) else type(error).__name__
        return TransportError(f"Connection to {base_url} failed: {detail}")
    if isinstance(error, anthropic.APIStatusError):
        status = error.status_code
        body = _body_of(error)
        if status < 400:
            # An `error` event inside a 200 stream (the SDK raises it as a status error).
            return error_from_stream_payload(body)
        typed = error_from_response(status, dict(error.response.headers), body)
        if isinstance(typed, AuthenticationError):
            typed.message = f"{typed.message}; {KEY_FIX}"
            typed.args = (typed.message,)
        return typed
    return MalformedStreamError(f"The server's reply could not be read ({type(error).__name__})")


def _quiet_sdk_warnings() -> None:
    """Keep the SDK's per-request warnings (a model near its end of life, a thinking mode it
    prefers) off the terminal: printed to stderr they would tear through the TUI. Forge
    sends what the settings say; the model's retirement is the user's to read in the docs."""
    warnings.filterwarnings(
        "ignore", message=r"The model '.*' is deprecated", category=DeprecationWarning
    )
    warnings.filterwarnings(
        "ignore", message=r"Using Claude with .* thinking", category=UserWarning
    )


class AnthropicProvider(ProviderIdentity):
    """A `Provider` and `ModelCloner` for the Anthropic Messages API (or a gateway speaking it).

    `thinking_budget` > 0 turns on extended thinking with that many tokens; `cache_ttl` is the
    lifetime of the prompt-cache breakpoints ("5m" or "1h"). The key goes only into the SDK's
    `x-api-key` header and never into `repr` or error messages.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 120,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        thinking_budget: int = 0,
        cache_ttl: CacheTtl = "5m",
    ) -> None:
        self._model = model
        self._base_url = sdk_base_url(base_url)
        self._api_key = api_key
        self._timeout = timeout
        self._retry = RetryPolicy(max_retries, backoff_base, backoff_max)
        self._thinking_budget = max(0, thinking_budget)
        self._cache_ttl: CacheTtl = cache_ttl
        self._owns_client = True
        _quiet_sdk_warnings()
        # Imported when the first provider is made, not with Forge: the SDK takes a while to
        # load and an OpenAI-compatible session never needs it.
        import anthropic

        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=self._base_url,
            max_retries=0,  # Forge's RetryPolicy applies
            timeout=timeout,
            default_headers={"User-Agent": f"forge/{forge.__version__}"},
        )

    # --- identity ----------------------------------------------------------------------------
    @property
    def thinking_budget(self) -> int:
        """Tokens of extended thinking per request (0 = off)."""
        return self._thinking_budget

    @property
    def cache_ttl(self) -> CacheTtl:
        """The prompt-cache lifetime of the breakpoints this provider places."""
        return self._cache_ttl

    def clone_with_model(
        self,
        model: str,
        *,
        request_timeout: float | None = None,
        max_retries: int | None = None,
    ) -> AnthropicProvider:
        """A copy sharing the SDK client (so its connections) and key on `model`; the timeout
        per request and the retry count are this provider's unless given. Summaries run
        without extended thinking."""
        clone = copy.copy(self)
        clone._model = model
        clone._owns_client = False
        clone._thinking_budget = 0
        if request_timeout is not None:
            clone._timeout = request_timeout
        if max_retries is not None:
            clone._retry = dataclasses.replace(self._retry, max_retries=max_retries)
        return clone

    async def aclose(self) -> None:
        """Close the SDK client if this provider created it (clones never do)."""
        if self._owns_client:
            await self._client.close()

    async def fetch_json(self, method: str, url: str, body: dict[str, Any] | None = None) -> Any:
        """Always None: the Messages API states no context window, so the window comes from the
        model table or `context.max_tokens` (a `JsonFetcher` for window discovery)."""
        return None

    async def list_models(self) -> list[str]:
        """The ids of the models the Messages API offers (`GET /v1/models` through the SDK,
        with its own key header); ModelListError saying why when it cannot tell."""
        import anthropic

        url = f"{sdk_base_url(self._base_url)}/v1/models"
        try:
            async with asyncio.timeout(MODEL_LIST_TIMEOUT):
                return sorted({model.id async for model in self._client.models.list()})
        except TimeoutError:
            raise ModelListError(f"could not reach {url} (timeout)") from None
        except anthropic.APIStatusError as error:
            raise ModelListError(f"{url} answered HTTP {error.status_code}") from None
        except anthropic.APIError as error:
            raise ModelListError(f"could not reach {url} ({type(error).__name__})") from None

    # --- requests ----------------------------------------------------------------------------
    def request_body(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        required_tool: str | None = None,
    ) -> dict[str, Any]:
        """The Messages API request for `messages`: prompt, breakpoints, thinking, limits;
        `required_tool` forced through `tool_choice` unless thinking is on (the API refuses
        forced tool use with extended thinking)."""
        thinking = self._thinking_budget > 0 and not last_turn_lacks_thinking(messages)
        prompt = with_breakpoints(
            to_messages_request(messages, tools, with_thinking=thinking), self._cache_ttl
        )
        # The reply headroom the context budget keeps free: prompt + max_tokens must fit the
        # window, or the API refuses the request.
        reply_tokens = max_tokens or min(max_output_tokens(self._model), MAXIMUM_REPLY_HEADROOM)
        body: dict[str, Any] = {"model": self._model, "messages": prompt.messages}
        if prompt.system:
            body["system"] = prompt.system
        if prompt.tools:
            body["tools"] = prompt.tools
        if thinking:
            body["thinking"] = {"type": "enabled", "budget_tokens": self._thinking_budget}
            reply_tokens = max(reply_tokens, self._thinking_budget + 4096)
        elif required_tool and prompt.tools:
            body["tool_choice"] = {"type": "tool", "name": required_tool}
        body["max_tokens"] = reply_tokens
        return body

    def _redact_key(self, error: LLMError) -> None:
        if len(self._api_key) >= _SHORTEST_REDACTED_KEY and self._api_key in error.message:
            error.message = error.message.replace(self._api_key, "***")
            error.args = (error.message,)

    def _retries(self) -> RetryLoop:
        """The retry loop of one request."""
        return RetryLoop(self._retry, self._model, self._base_url, logger, self._redact_key)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        required_tool: str | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Stream one reply; the last event is always `StreamFinished`. Retryable failures are
        retried only while nothing visible has been yielded, each announced by a
        `RetryScheduled` before the wait."""
        body = self.request_body(
            messages, tools, max_tokens=max_tokens, required_tool=required_tool
        )

        def attempt() -> tuple[AsyncGenerator[StreamEvent, None], MessagesStreamAssembler]:
            assembler = MessagesStreamAssembler(self._model)
            return self._stream_once(body, assembler), assembler

        async with aclosing(self._retries().stream(attempt)) as events:
            async for event in events:
                yield event

    async def _stream_once(
        self, body: dict[str, Any], assembler: MessagesStreamAssembler
    ) -> AsyncGenerator[StreamEvent, None]:
        import anthropic

        if not self._api_key:
            raise AuthenticationError(f"No API key for {self._base_url}; {KEY_FIX}")
        try:
            events: AsyncIterator[Any] = await self._client.messages.create(
                **body, stream=True, timeout=self._timeout
            )
            try:
                async for event in events:
                    # warnings=False: a field of the wrong type (a float token count) is checked
                    # by the assembler, not printed by pydantic on stderr.
                    for forge_event in assembler.feed(event.to_dict(warnings=False)):
                        yield forge_event
            finally:
                close = getattr(events, "close", None)
                if close is not None:
                    await close()
        except anthropic.APIError as error:
            raise _typed_error(error, self._base_url) from None
        if not assembler.stopped:
            raise TransportError(f"The stream from {self._base_url} ended before message_stop")
        yield StreamFinished(assembler.completion())

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        on_retry: RetrySink | None = None,
    ) -> Completion:
        """One whole reply (streamed underneath: the API's long requests want a stream);
        `on_retry` is told of each retry before the wait."""
        async with aclosing(self.stream(messages, tools, max_tokens=max_tokens)) as events:
            async for event in events:
                if isinstance(event, StreamFinished):
                    return event.completion
                if isinstance(event, RetryScheduled) and on_retry is not None:
                    on_retry(event)
        raise MalformedStreamError("The stream ended without a reply")
