"""Everything a test can script on the loopback server, checked with a plain HTTP client:
replay byte for byte (with the recorded status and content type), latency, slow streams, the
usual faults, malformed JSON, the request log, responders and concurrency."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import CORPUS
from tests.support.openai_server import (
    Call,
    ContextOverflow,
    MalformedJSON,
    OpenAIServer,
    QuotaExhausted,
    RateLimited,
    RecordedRequest,
    Replay,
    ServerFault,
    Text,
    ToolCalls,
    recorded_response,
)

CORPUS_BODIES = (
    sorted(
        path
        for path in (CORPUS / "sse").rglob("*")
        if path.suffix in (".sse", ".json") and not path.name.endswith(".meta.json")
    )
    if (CORPUS / "sse").is_dir()
    else []
)

RECORDED_STREAM = (
    ": OPENROUTER PROCESSING\r\n\r\n"
    'data: {"choices": [{"index": 0, "delta": {"content": "Grüße 🎉"}}]}\r\n\r\n'
    'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    "data: [DONE]\n\n"
).encode()


def chat_url(server: OpenAIServer) -> str:
    return f"{server.base_url}/chat/completions"


def request_body(stream: bool = True, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "stream": stream, "messages": [{"role": "user", "content": "hi"}]} | extra


def raw_response(
    server: OpenAIServer, body: dict[str, Any] | None = None
) -> tuple[httpx.Response, bytes]:
    """POST and read the body exactly as it came off the wire (no decoding)."""
    with (
        httpx.Client() as client,
        client.stream("POST", chat_url(server), json=body or request_body()) as response,
    ):
        return response, b"".join(response.iter_raw())


def data_lines(body: bytes) -> list[str]:
    return [line[6:] for line in body.decode().splitlines() if line.startswith("data: ")]


# --- replay -------------------------------------------------------------------------------------


@pytest.mark.parametrize("split", [None, 1, 3])
def test_replay_sends_the_recorded_bytes_unchanged(
    llm_server: OpenAIServer, tmp_path: Path, split: int | None
) -> None:
    recording = tmp_path / "stream.sse"
    recording.write_bytes(RECORDED_STREAM)
    llm_server.enqueue(Replay(recording, split_every=split))
    response, body = raw_response(llm_server)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert body == RECORDED_STREAM


def test_replay_uses_the_status_and_content_type_the_meta_file_recorded(
    llm_server: OpenAIServer, tmp_path: Path
) -> None:
    error_body = b'{"error": {"message": "The model `x` does not exist", "code": null}}\n'
    (tmp_path / "cassette.0.json").write_bytes(error_body)
    (tmp_path / "cassette.1.sse").write_bytes(RECORDED_STREAM)
    interactions = [
        {"file": "cassette.0.json", "status": {"code": 404},
         "response_headers": {"content-type": ["application/json; charset=utf-8"]}},
        {"file": "cassette.1.sse", "status": {"code": 200},
         "response_headers": {"content-type": ["text/event-stream;charset=UTF-8"]}},
    ]  # fmt: skip
    (tmp_path / "cassette.meta.json").write_text(json.dumps({"interactions": interactions}))

    assert recorded_response(tmp_path / "cassette.0.json") == (
        404,
        "application/json; charset=utf-8",
    )
    llm_server.enqueue(Replay(tmp_path / "cassette.0.json"), Replay(tmp_path / "cassette.1.sse"))
    error, error_bytes = raw_response(llm_server, request_body(stream=False))
    assert (error.status_code, error_bytes) == (404, error_body)
    assert error.headers["content-type"] == "application/json; charset=utf-8"
    stream, stream_bytes = raw_response(llm_server)
    assert stream.headers["content-type"] == "text/event-stream;charset=UTF-8"
    assert stream_bytes == RECORDED_STREAM


@pytest.mark.skipif(not CORPUS_BODIES, reason="shared corpus not present")
@pytest.mark.parametrize("path", CORPUS_BODIES, ids=lambda path: path.name)
def test_every_corpus_body_replays_byte_for_byte(llm_server: OpenAIServer, path: Path) -> None:
    llm_server.enqueue(Replay(path, split_every=7))
    response, body = raw_response(llm_server)
    assert body == path.read_bytes()
    assert response.status_code == recorded_response(path)[0]


# --- latency and slow streams -------------------------------------------------------------------


def test_latency_holds_back_the_response(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(Text("late", delay=3.0), Text("on time"))
    with httpx.Client(timeout=0.2) as client:
        with pytest.raises(httpx.ReadTimeout):
            client.post(chat_url(llm_server), json=request_body(stream=False))
        answer = client.post(chat_url(llm_server), json=request_body(stream=False)).json()
    assert answer["choices"][0]["message"]["content"] == "on time"


def test_a_slow_stream_sends_its_first_chunk_then_stalls(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(Text("abcdef", chunk_size=1, chunk_delay=3.0))
    received: list[bytes] = []
    with (
        httpx.Client(timeout=0.5) as client,
        client.stream("POST", chat_url(llm_server), json=request_body()) as response,
        pytest.raises(httpx.ReadTimeout),
    ):
        for piece in response.iter_raw():
            received.append(piece)
    assert b'"role": "assistant"' in b"".join(received)
    assert b"[DONE]" not in b"".join(received)


# --- faults -------------------------------------------------------------------------------------


def test_the_usual_faults_have_the_shapes_real_servers_send(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(
        RateLimited("7"),
        RateLimited(retry_after_ms="1500"),
        QuotaExhausted(),
        ContextOverflow(limit=4096, sent=5000),
        ServerFault(),
        ServerFault(503),
    )
    responses = [
        httpx.post(chat_url(llm_server), json=request_body(stream=False)) for _ in range(6)
    ]
    assert [response.status_code for response in responses] == [429, 429, 429, 400, 500, 503]
    assert responses[0].headers["retry-after"] == "7"
    assert responses[1].headers["retry-after-ms"] == "1500"
    assert "retry-after" not in responses[1].headers
    errors = [response.json()["error"] for response in responses]
    assert errors[2]["code"] == "insufficient_quota"
    assert errors[3]["code"] == "context_length_exceeded"
    assert "maximum context length is 4096 tokens" in errors[3]["message"]
    assert errors[4]["type"] == "server_error"


def test_malformed_json_is_sent_as_a_stream_line(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(MalformedJSON())
    _, body = raw_response(llm_server)
    (line,) = data_lines(body)
    with pytest.raises(json.JSONDecodeError):
        json.loads(line)


def test_closing_the_client_mid_stream_is_counted(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(Text("x" * 200, chunk_size=1, chunk_delay=0.01))
    with (
        httpx.Client() as client,
        client.stream("POST", chat_url(llm_server), json=request_body()) as response,
    ):
        next(response.iter_raw())
    for _ in range(300):
        if llm_server.cancelled_streams:
            break
        threading.Event().wait(0.01)
    assert llm_server.cancelled_streams == 1


# --- scripted replies and the request log --------------------------------------------------------


def test_whole_replies_carry_reasoning_tool_calls_and_usage(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(
        Text("answer", reasoning="because", prompt_tokens=5, completion_tokens=2),
        ToolCalls([Call("ls", '{"path": "."}', id="call_7")], text="Looking."),
    )
    first = httpx.post(chat_url(llm_server), json=request_body(stream=False)).json()
    assert first["choices"][0]["message"] == {
        "role": "assistant",
        "content": "answer",
        "reasoning_content": "because",
    }
    assert first["usage"] == {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    second = httpx.post(chat_url(llm_server), json=request_body(stream=False)).json()
    choice = second["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "Looking."
    assert choice["message"]["tool_calls"][0]["function"] == {
        "name": "ls",
        "arguments": '{"path": "."}',
    }


def test_streamed_tool_calls_arrive_in_chunks_by_index(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(
        ToolCalls([Call("a", {"k": "v" * 20}, id="c1"), Call("b", {}, id="c2")], chunk_size=5)
    )
    _, body = raw_response(llm_server)
    deltas = [
        call
        for line in data_lines(body)[:-1]
        for choice in json.loads(line)["choices"]
        for call in choice["delta"].get("tool_calls") or []
    ]
    first_arguments = "".join(d["function"].get("arguments", "") for d in deltas if d["index"] == 0)
    assert json.loads(first_arguments) == {"k": "v" * 20}
    assert sum(1 for delta in deltas if delta["index"] == 0) > 3
    assert [d["id"] for d in deltas if "id" in d] == ["c1", "c2"]


def test_the_request_log_records_what_was_asked(llm_server: OpenAIServer) -> None:
    tools = [{"type": "function", "function": {"name": "ls", "parameters": {}}}]
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "do it"}]
    httpx.post(
        chat_url(llm_server),
        json={"model": "main", "messages": messages, "tools": tools, "stream": True},
        headers={"Authorization": "Bearer k"},
    )
    httpx.post(chat_url(llm_server), json=request_body(stream=False) | {"model": "summarizer"})
    main, summarizer = llm_server.requests
    assert (main.model, main.stream, main.messages, main.tools) == ("main", True, messages, tools)
    assert main.headers["authorization"] == "Bearer k"
    assert main.text() == "sys\ndo it"
    assert main.finished_at is not None
    assert llm_server.requests_for("summarizer") == [summarizer]
    assert not summarizer.stream


def test_responder_answers_once_the_queue_is_empty(llm_server: OpenAIServer) -> None:
    def echo_model(request: RecordedRequest) -> Text:
        return Text(f"hello from {request.model}")

    llm_server.responder = echo_model
    llm_server.enqueue(Text("queued first"))
    assert llm_server.pending == 1
    answers = [
        httpx.post(chat_url(llm_server), json=request_body(stream=False) | {"model": model}).json()[
            "choices"
        ][0]["message"]["content"]
        for model in ("a", "b")
    ]
    assert answers == ["queued first", "hello from b"]
    assert llm_server.pending == 0


def test_stream_options_can_be_rejected_like_old_servers_do(llm_server: OpenAIServer) -> None:
    llm_server.reject_stream_options = True
    with_options = request_body(stream_options={"include_usage": True})
    rejected = httpx.post(chat_url(llm_server), json=with_options)
    assert rejected.status_code == 400
    assert "stream_options" in rejected.json()["error"]["message"]
    accepted = httpx.post(chat_url(llm_server), json=request_body())
    assert accepted.status_code == 200


def test_concurrent_requests_are_served_together(llm_server: OpenAIServer) -> None:
    llm_server.responder = lambda request: Text("slow", delay=0.5)
    threads = [
        threading.Thread(
            target=httpx.post, args=(chat_url(llm_server),), kwargs={"json": request_body()}
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert llm_server.max_active == 3


def test_reset_forgets_the_script_and_the_log(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(Text("consumed"))
    llm_server.reject_stream_options = True
    httpx.post(chat_url(llm_server), json=request_body(stream=False))
    llm_server.enqueue(Text("dropped"))
    llm_server.reset()
    assert (llm_server.pending, llm_server.requests, llm_server.reject_stream_options) == (
        0,
        [],
        False,
    )
    default = httpx.post(chat_url(llm_server), json=request_body(stream=False)).json()
    assert default["choices"][0]["message"]["content"] == "ok"
