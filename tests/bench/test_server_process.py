"""The benchmark server in its own process: readiness, the summarizer's rule, in-flight counts,
and that the child never outlives its parent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from bench.server_process import ServerProcess, summarizer_input, summary_limit, summary_of
from forge.llm.messages import Message
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.stream import MessageDelta, UsageReported
from forge.llm.tokenizer import get_encoding

ROOT = Path(__file__).resolve().parents[2]
O200K = get_encoding("o200k_base")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); its /proc status says so.
    status = Path(f"/proc/{pid}/status")
    return not (status.is_file() and "State:\tZ" in status.read_text())


def _wait_gone(pid: int, limit: float = 60.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_ready_on_entry_and_killed_on_exit() -> None:
    with ServerProcess(mode="summarizer") as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        assert server.pid != os.getpid()
        models = httpx.get(f"{server.base_url}/models", timeout=30)
        assert models.status_code == 200
        assert server.stats()["requests"] == 0
        pid = server.pid
    assert _wait_gone(pid)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.base_url}/models", timeout=5)


def test_the_child_exits_when_its_parent_dies(tmp_path: Path) -> None:
    script = (
        "import sys, time\n"
        "from bench.server_process import ServerProcess\n"
        "server = ServerProcess(mode='summarizer').start()\n"
        "print(server.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert _alive(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait(timeout=30)
    parent.stdout.close()
    assert _wait_gone(child), "the server outlived its parent"


def test_summary_rule_first_sentences_within_a_fifth() -> None:
    sentence = "The parser reads one line at a time and keeps the offsets. "
    text = sentence * 30
    tokens = len(O200K.encode(text))
    answer = summary_of(text, O200K)
    assert text.startswith(answer)
    assert answer.endswith(".")
    answer_tokens = len(O200K.encode(answer))
    assert answer_tokens <= tokens // 5
    # Whole sentences: one more sentence would break the limit.
    assert answer_tokens + len(O200K.encode(sentence)) > tokens // 5


def test_summary_rule_caps_at_500_tokens() -> None:
    text = "Every line of this log says the same thing again. " * 2_000
    assert summary_limit(len(O200K.encode(text))) == 500
    assert len(O200K.encode(summary_of(text, O200K))) <= 500


def test_summary_rule_cuts_a_long_first_sentence() -> None:
    text = " ".join(f"word{i}" for i in range(500))
    answer = summary_of(text, O200K)
    assert text.startswith(answer)
    assert 0 < len(O200K.encode(answer)) <= summary_limit(len(O200K.encode(text)))


def test_the_summarizer_input_is_the_material_block_when_there_is_one() -> None:
    prompt = "Task: summarize.\n\nKeep paths.\n\n<material>\nI read src/a.py.\n</material>"
    assert summarizer_input(prompt) == "I read src/a.py."
    assert summarizer_input("no block here") == "no block here"
    nested = "<material>\nquoted <material>x</material> inside\n</material>"
    assert summarizer_input(nested) == "quoted <material>x</material> inside"


async def test_summarizer_summarizes_the_material_not_the_instructions() -> None:
    material = "I ran make test in src/cli. It failed with exit code 2. " * 20
    prompt = f"Task: write a summary.\n\nBe brief.\n\n<material>\n{material}\n</material>"
    with ServerProcess(mode="summarizer") as server:
        provider = OpenAICompatibleProvider("bench-mini", server.base_url, "k", max_retries=0)
        try:
            completion = await provider.complete([Message(role="user", content=prompt)])
        finally:
            await provider.aclose()
    assert completion.message.content == summary_of(material.strip("\n"), O200K)
    assert completion.message.content.startswith("I ran make test in src/cli.")


async def test_summarizer_answers_the_last_user_message_with_usage() -> None:
    material = "Fixed the overflow in parse_int. The tests pass now. " * 20
    messages = [
        Message(role="system", content="Summarize the tool output."),
        Message(role="user", content="an older message that is not summarized"),
        Message(role="user", content=material),
    ]
    with ServerProcess(mode="summarizer", latency=0.01) as server:
        provider = OpenAICompatibleProvider("bench-mini", server.base_url, "k", max_retries=0)
        try:
            completion = await provider.complete(messages)
            streamed_text = ""
            streamed_usage = None
            async for event in provider.stream(messages):
                if isinstance(event, MessageDelta):
                    streamed_text += event.text
                elif isinstance(event, UsageReported):
                    streamed_usage = event.usage
        finally:
            await provider.aclose()
        stats = server.stats()
    expected = summary_of(material, O200K)
    assert completion.message.content == expected
    assert streamed_text == expected
    prompt = sum(len(O200K.encode(m.content)) for m in messages)
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == prompt
    assert completion.usage.completion_tokens == len(O200K.encode(expected))
    assert streamed_usage is not None and streamed_usage.prompt_tokens == prompt
    assert stats["requests"] == 2 and stats["completed"] == 2
    assert stats["prompt_tokens"] == 2 * prompt


def test_stream_mode_streams_the_file_and_counts_streams_in_flight(tmp_path: Path) -> None:
    text_file = tmp_path / "answer.md"
    text_file.write_text("# Title\n\nSome text — with ünïcode and `code`.\n" * 40, "utf-8")
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "go"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with ServerProcess(mode="stream", text_file=text_file, tokens_per_second=5) as server:
        url = f"{server.base_url}/chat/completions"
        with httpx.Client(timeout=60) as client:
            streams = [client.stream("POST", url, json=body) for _ in range(4)]
            responses = [stream.__enter__() for stream in streams]
            try:
                readers = [response.iter_lines() for response in responses]
                for reader in readers:  # each stream has started: all four are in flight
                    next(reader)
                stats = server.stats()
                assert stats["in_flight"] == 4
                assert stats["peak_in_flight"] == 4
            finally:
                for stream in streams:
                    stream.__exit__(None, None, None)
        server.reset_stats()
        with ServerProcess(mode="stream", text_file=text_file, tokens_per_second=0) as fast:
            lines = httpx.post(
                f"{fast.base_url}/chat/completions", json=body, timeout=60
            ).text.splitlines()
    payloads = [json.loads(line[6:]) for line in lines if line.startswith("data: {")]
    text = "".join(p["choices"][0]["delta"].get("content") or "" for p in payloads if p["choices"])
    assert text == text_file.read_text("utf-8")
    usage = payloads[-1]["usage"]
    assert usage["completion_tokens"] == len(O200K.encode(text))
    content_events = [
        p for p in payloads if p["choices"] and p["choices"][0]["delta"].get("content")
    ]
    assert len(content_events) > 100  # token-sized chunks, as real servers send


def test_a_paced_stream_reports_how_long_it_took(tmp_path: Path) -> None:
    text_file = tmp_path / "answer.md"
    text_file.write_text("one two three four five six seven eight nine ten " * 4, "utf-8")
    pieces = len(O200K.encode(text_file.read_text("utf-8")))
    body = {"model": "m", "messages": [{"role": "user", "content": "go"}], "stream": True}
    with ServerProcess(mode="stream", text_file=text_file, tokens_per_second=200) as server:
        assert server.stats()["last_stream_milliseconds"] == 0
        httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=60)
        took = server.stats()["last_stream_milliseconds"]
    # The pacing sends piece n no earlier than n / rate after the first.
    assert took >= (pieces - 1) / 200 * 1000 - 1
