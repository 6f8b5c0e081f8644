"""The test server itself speaks the wire format the way real servers do."""

from __future__ import annotations

import json

import httpx

from tests.support.openai_server import Call, Disconnect, Fault, OpenAIServer, Text, ToolCalls


def _events(body: str) -> list[str]:
    return [line[6:] for line in body.splitlines() if line.startswith("data: ")]


def test_streams_text_with_usage_and_done(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(Text("hello world", chunk_size=4, prompt_tokens=42))
    response = httpx.post(
        f"{llm_server.base_url}/chat/completions",
        json={
            "model": "m1",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "hi"}],
        },
    )
    data = _events(response.text)
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "hello world"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] == 42
    assert llm_server.requests[0].model == "m1"


def test_tool_calls_non_streaming_and_faults(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(
        ToolCalls([Call("read_file", {"path": "a.py"}, id="call_1")]),
        Fault(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "2"}),
    )
    url = f"{llm_server.base_url}/chat/completions"
    first = httpx.post(url, json={"model": "m", "messages": []}).json()
    call = first["choices"][0]["message"]["tool_calls"][0]
    assert call["id"] == "call_1" and json.loads(call["function"]["arguments"]) == {"path": "a.py"}
    second = httpx.post(url, json={"model": "m", "messages": []})
    assert second.status_code == 429 and second.headers["retry-after"] == "2"


def test_disconnect_cuts_the_stream(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(Disconnect(Text("a" * 100, chunk_size=5), after_chunks=3))
    try:
        response = httpx.post(
            f"{llm_server.base_url}/chat/completions",
            json={"model": "m", "stream": True, "messages": []},
        )
        body = response.text
    except httpx.HTTPError:
        body = ""
    assert "[DONE]" not in body
