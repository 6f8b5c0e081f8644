"""The API key never shows: not in errors, not in tracebacks rendered with their locals (as
Textual's crash screen renders them), not in any log record, Forge's or httpx's."""

from __future__ import annotations

import io
import logging
import traceback
from collections.abc import AsyncIterator

import pytest
from rich.console import Console
from rich.traceback import Traceback

from forge.llm.errors import AuthenticationError, LLMError, ServerError, TransportError
from forge.llm.messages import user
from forge.llm.openai_provider import OpenAICompatibleProvider
from tests.support.openai_server import Disconnect, Fault, OpenAIServer, Text

SECRET_KEY = "sk-forge-SECRECY-7c1d2e3f4a5b6978"
ECHOING_FAULT_BODY = {"error": {"message": f"Incorrect API key provided: {SECRET_KEY}"}}


@pytest.fixture
async def provider(llm_server: OpenAIServer) -> AsyncIterator[OpenAICompatibleProvider]:
    instance = OpenAICompatibleProvider(
        "m", llm_server.base_url, SECRET_KEY, max_retries=0, timeout=5
    )
    yield instance
    await instance.aclose()


async def failure_of_stream(provider: OpenAICompatibleProvider) -> LLMError:
    try:
        async for _ in provider.stream([user("hi")]):
            pass
    except LLMError as error:
        return error
    raise AssertionError("the stream did not fail")


async def failure_of_complete(provider: OpenAICompatibleProvider) -> LLMError:
    try:
        await provider.complete([user("hi")])
    except LLMError as error:
        return error
    raise AssertionError("the request did not fail")


def rendered_with_locals(error: BaseException) -> str:
    """The traceback as the standard library and Rich render it, every frame's locals shown."""
    plain = "".join(
        traceback.TracebackException.from_exception(error, capture_locals=True).format()
    )
    console = Console(file=io.StringIO(), width=200, color_system=None)
    rich_traceback = Traceback.from_exception(
        type(error), error, error.__traceback__, show_locals=True
    )
    console.print(rich_traceback)
    assert isinstance(console.file, io.StringIO)
    return plain + console.file.getvalue()


def assert_key_hidden_in(error: LLMError) -> None:
    rendered = rendered_with_locals(error)
    # The render really includes locals, so the check below means something.
    assert "provider = OpenAICompatibleProvider(model='m'" in rendered
    assert SECRET_KEY not in rendered


@pytest.mark.parametrize(("status", "expected"), [(401, AuthenticationError), (500, ServerError)])
async def test_tracebacks_with_locals_never_show_the_key(
    provider: OpenAICompatibleProvider,
    llm_server: OpenAIServer,
    status: int,
    expected: type[LLMError],
) -> None:
    # The server even echoes the key back, as some do on a 401.
    llm_server.enqueue(Fault(status, ECHOING_FAULT_BODY), Fault(status, ECHOING_FAULT_BODY))
    for error in (await failure_of_stream(provider), await failure_of_complete(provider)):
        assert type(error) is expected
        assert_key_hidden_in(error)


async def test_a_stream_cut_mid_way_shows_no_key_in_its_traceback(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(Disconnect(Text("cut short " * 10, chunk_size=3), after_chunks=2))
    error = await failure_of_stream(provider)
    assert type(error) is TransportError
    assert_key_hidden_in(error)


async def test_no_log_record_ever_holds_the_key(
    llm_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    provider = OpenAICompatibleProvider(
        "m", llm_server.base_url, SECRET_KEY, backoff_base=0.001, backoff_max=0.01
    )
    llm_server.enqueue(
        Fault(500, ECHOING_FAULT_BODY),
        Text("streamed"),
        Fault(503, ECHOING_FAULT_BODY),
        Text("whole"),
        Fault(401, ECHOING_FAULT_BODY),
    )
    _ = [event async for event in provider.stream([user("hi")])]
    await provider.complete([user("hi")])
    with pytest.raises(AuthenticationError):
        await provider.complete([user("hi")])
    await provider.aclose()

    retries = [record for record in caplog.records if record.name == "forge.llm.openai_provider"]
    assert [record.getMessage().split(";")[0] for record in retries] == [
        f"server_error from {llm_server.base_url} (model m)",
        f"server_error from {llm_server.base_url} (model m)",
    ]
    assert all("Incorrect API key provided: ***" in record.getMessage() for record in retries)
    # httpx and httpcore log every request at DEBUG; they must not carry the key either.
    assert any(record.name.startswith(("httpx", "httpcore")) for record in caplog.records)
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    for record in caplog.records:
        assert SECRET_KEY not in formatter.format(record)
        assert SECRET_KEY not in repr(record.__dict__)
