"""HTTP failures become Forge's typed errors, with readable messages and no API key."""

from __future__ import annotations

import email.utils
import socket
import traceback
from collections.abc import AsyncIterator

import pytest

from forge.llm.errors import (
    AuthenticationError,
    BadRequestError,
    ContextOverflowError,
    LLMError,
    MalformedStreamError,
    ModelNotFoundError,
    QuotaExhaustedError,
    RateLimitError,
    ServerError,
    TransportError,
)
from forge.llm.http_errors import parse_retry_after
from forge.llm.messages import user
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.stream import StreamEvent
from tests.support.openai_server import Fault, MalformedJSON, OpenAIServer, Raw, Text

SECRET_KEY = "sk-forge-DISTINCTIVE-5e1f0a9c7b3d"


@pytest.fixture
async def provider(llm_server: OpenAIServer) -> AsyncIterator[OpenAICompatibleProvider]:
    instance = OpenAICompatibleProvider(
        "main-model", llm_server.base_url, SECRET_KEY, max_retries=0, timeout=5
    )
    yield instance
    await instance.aclose()


async def drain(provider: OpenAICompatibleProvider) -> list[StreamEvent]:
    return [event async for event in provider.stream([user("hi")])]


def assert_no_key(error: BaseException) -> None:
    rendered = "".join(traceback.format_exception(error))
    for text in (str(error), repr(error), rendered, repr(error.args)):
        assert SECRET_KEY not in text


def error_body(message: str, code: str | None = None, kind: str = "invalid_request_error") -> dict:
    return {"error": {"message": message, "type": kind, "code": code, "param": None}}


CASES = [
    (Fault(401, error_body("Incorrect API key provided")), AuthenticationError),
    (Fault(403, error_body("Your key has no access to this model")), AuthenticationError),
    (Fault(404, error_body("The model `nope` does not exist", "model_not_found")),
     ModelNotFoundError),
    (Fault(400, error_body("too long", "context_length_exceeded")), ContextOverflowError),
    (Fault(400, error_body("This model's maximum context length is 8192 tokens. However, "
                           "your messages resulted in 9000 tokens.")), ContextOverflowError),
    (Fault(400, error_body("input exceeds the context window of this model")),
     ContextOverflowError),
    (Fault(400, error_body("prompt is too long: 210000 tokens > 200000 maximum")),
     ContextOverflowError),
    (Fault(400, error_body("Too many tokens in the request")), ContextOverflowError),
    (Fault(400, error_body("Unsupported value: 'temperature'", "unsupported_value")),
     BadRequestError),
    (Fault(429, error_body("You exceeded your current quota", "insufficient_quota",
                           "insufficient_quota")), QuotaExhaustedError),
    (Fault(429, error_body("Rate limit reached", "rate_limit_exceeded")), RateLimitError),
    (Fault(500, error_body("The server had an error")), ServerError),
    (Fault(503, "upstream unavailable"), ServerError),
]  # fmt: skip


@pytest.mark.parametrize(("fault", "expected"), CASES)
async def test_status_and_body_map_to_typed_errors(
    provider: OpenAICompatibleProvider,
    llm_server: OpenAIServer,
    fault: Fault,
    expected: type[LLMError],
) -> None:
    llm_server.enqueue(fault, fault)
    with pytest.raises(expected) as streamed:
        await drain(provider)
    with pytest.raises(expected) as whole:
        await provider.complete([user("hi")])
    for error in (streamed.value, whole.value):
        assert type(error) is expected
        assert error.status == fault.status
        server_text = fault.body if isinstance(fault.body, str) else fault.body["error"]["message"]
        assert server_text[:40] in str(error)
        assert_no_key(error)


async def test_rate_limit_carries_retry_after(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(
        Fault(429, error_body("slow down"), headers={"Retry-After": "7"}),
        Fault(429, error_body("slow down"), headers={"retry-after-ms": "1500"}),
        Fault(429, error_body("slow down")),
    )
    retry_afters = []
    for _ in range(3):
        with pytest.raises(RateLimitError) as caught:
            await drain(provider)
        retry_afters.append(caught.value.retry_after)
    assert retry_afters == [7.0, 1.5, None]


async def test_the_key_never_appears_in_errors_or_repr(llm_server: OpenAIServer) -> None:
    provider = OpenAICompatibleProvider("m", llm_server.base_url, SECRET_KEY, max_retries=0)
    assert SECRET_KEY not in repr(provider)
    assert SECRET_KEY not in repr(provider.clone_with_model("other"))
    assert "api_key=<set>" in repr(provider)
    # A careless server that echoes the key back must not get it into our message.
    llm_server.enqueue(
        Fault(401, error_body(f"Incorrect API key provided: {SECRET_KEY}")),
        Fault(401, error_body(f"Incorrect API key provided: {SECRET_KEY}")),
    )
    with pytest.raises(AuthenticationError) as streamed:
        await drain(provider)
    with pytest.raises(AuthenticationError) as whole:
        await provider.complete([user("hi")])
    for error in (streamed.value, whole.value):
        assert "Incorrect API key provided: ***" in str(error)
        assert_no_key(error)
    await provider.aclose()


async def test_connection_refused_is_a_transport_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    provider = OpenAICompatibleProvider(
        "m", f"http://127.0.0.1:{closed_port}/v1", SECRET_KEY, max_retries=0
    )
    with pytest.raises(TransportError) as streamed:
        await drain(provider)
    with pytest.raises(TransportError) as whole:
        await provider.complete([user("hi")])
    for error in (streamed.value, whole.value):
        assert f"127.0.0.1:{closed_port}" in str(error)
        assert_no_key(error)
    await provider.aclose()


async def test_read_timeout_is_a_transport_error(llm_server: OpenAIServer) -> None:
    provider = OpenAICompatibleProvider(
        "m", llm_server.base_url, SECRET_KEY, max_retries=0, timeout=0.2
    )
    llm_server.enqueue(Text("late", delay=2.0), Text("late", delay=2.0))
    with pytest.raises(TransportError, match="Timed out"):
        await drain(provider)
    with pytest.raises(TransportError, match="Timed out"):
        await provider.complete([user("hi")])
    await provider.aclose()


async def test_invalid_json_in_the_stream_is_malformed(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(MalformedJSON())
    with pytest.raises(MalformedStreamError, match="not JSON"):
        await drain(provider)


async def test_invalid_whole_reply_is_malformed(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(
        Raw(b"<html>gateway</html>", content_type="application/json"),
        Raw(b'{"id": "x", "choices": []}', content_type="application/json"),
    )
    with pytest.raises(MalformedStreamError):
        await provider.complete([user("hi")])
    with pytest.raises(MalformedStreamError, match="no choices"):
        await provider.complete([user("hi")])


async def test_error_object_in_a_whole_reply_is_typed(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    # Some proxies answer 200 with an error object instead of an HTTP error.
    llm_server.enqueue(
        Raw(
            b'{"error": {"message": "maximum context length exceeded", "code": 400}}',
            content_type="application/json",
        )
    )
    with pytest.raises(ContextOverflowError, match="maximum context length"):
        await provider.complete([user("hi")])


def test_retry_after_forms() -> None:
    moment = 1_700_000_000.0
    http_date = email.utils.formatdate(moment + 30, usegmt=True)
    assert parse_retry_after({"Retry-After": http_date}, now=moment) == 30.0
    assert parse_retry_after({"Retry-After": email.utils.formatdate(moment - 5)}, now=moment) == 0
    assert parse_retry_after({"retry-after": " 12 "}) == 12.0
    assert parse_retry_after({"Retry-After-Ms": "250", "Retry-After": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None
