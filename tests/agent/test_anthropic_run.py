"""`forge run` (a real subprocess) on the Anthropic Messages API (docs/adr/0037): a tool task
against the loopback Messages server with the summarization model on the OpenAI-compatible
loopback server (mixed providers), each key going only to its own server; the final jsonl
record prices cache reads and writes; a resumed session whose cache expired says what
re-caching costs before the first request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from forge.config.prices import price_table
from tests.headless.test_headless import API_KEY as OPENAI_KEY
from tests.headless.test_headless import forge_run, jsonl, types
from tests.support.anthropic_server import Answer, AnthropicServer, PromptTooLong, Use
from tests.support.openai_server import OpenAIServer, Text

ANTHROPIC_KEY = "sk-ant-test-run-0123456789abcdef"
MODEL = "claude-sonnet-4-5"


def anthropic_env(server: AnthropicServer, **more: str) -> dict[str, str]:
    return {
        "FORGE_LLM__PROVIDER": "anthropic",
        "FORGE_LLM__BASE_URL": server.base_url,
        "FORGE_LLM__MODEL": MODEL,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        **more,
    }


def test_a_tool_task_on_claude_with_summaries_on_an_openai_compatible_server(
    anthropic_server: AnthropicServer, llm_server: OpenAIServer, workspace: Path
) -> None:
    """Two runs of one session: the first reads a file (a tool call, its result, the
    completion); the second's first request is refused as too long, so Forge compacts — the
    first run's turn is summarized on the OpenAI-compatible server — and the retry goes on."""
    lines = "".join(f"line {n}: {'word ' * 10}\n" for n in range(160))
    (workspace / "big.txt").write_text(lines)
    anthropic_server.enqueue(
        Answer("Reading.", calls=[Use("read_file", {"path": "big.txt"})]),
        Answer("", calls=[Use("task_completion", {"result": "big.txt read"})]),
        PromptTooLong(),
        Answer("", calls=[Use("write_file", {"path": "out.txt", "content": "HI\n"})]),
        Answer("", calls=[Use("task_completion", {"result": "out.txt written"})]),
    )
    llm_server.responder = lambda request: Text("Summary: big.txt was read.")
    env = anthropic_env(
        anthropic_server,
        FORGE_LLM__SUMMARIZATION_PROVIDER="openai",
        FORGE_LLM__SUMMARIZATION_BASE_URL=llm_server.base_url,
        FORGE_LLM__SUMMARIZATION_MODEL="tiny-summarizer",
        FORGE_CONTEXT__MESSAGES_OLD_THRESHOLD="2",
        FORGE_CONTEXT__OBSERVATION_MASKING="false",
    )
    results = [
        forge_run(llm_server, workspace, "--yes", "--output", "jsonl", "read big.txt", env=env),
        forge_run(
            llm_server,
            workspace,
            "--yes",
            "--continue",
            "--output",
            "jsonl",
            "write out.txt",
            env=env,
        ),
    ]
    for result in results:
        assert result.returncode == 0, result.stdout + result.stderr
        assert jsonl(result)[-1]["reason"] == "completed"
        assert ANTHROPIC_KEY not in result.stdout + result.stderr
        assert "error" not in types(jsonl(result))
    records = jsonl(results[1])
    assert (workspace / "out.txt").read_text() == "HI\n"
    assert anthropic_server.pending == 0

    # The conversation went to Claude, the summary to the OpenAI-compatible server.
    chat = anthropic_server.requests
    assert len(chat) == 5 and {r.model for r in chat} == {MODEL}
    assert llm_server.requests and {r.model for r in llm_server.requests} == {"tiny-summarizer"}
    completed = [r for r in records if r["type"] == "summarization_completed"]
    assert any(r["model"] == "tiny-summarizer" for r in completed)
    assert next(r["trigger"] for r in records if r["type"] == "summarization_started") == "overflow"
    # Each key only to its own server.
    for request in chat:
        assert request.headers["authorization"] == f"Bearer {ANTHROPIC_KEY}"
    for request in llm_server.requests:
        assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"

    # Money: the final record prices cache reads and writes with Claude's prices.
    cost = records[-1]["cost"]
    agent = next(m for m in cost["models"] if m["kind"] == "agent")
    usage = anthropic_server.usage_log
    read = sum(u["cache_read_input_tokens"] for u in usage)
    written = sum(u["cache_creation_input_tokens"] for u in usage)
    fresh = sum(u["input_tokens"] for u in usage)
    output = sum(u["output_tokens"] for u in usage)
    assert agent["model"] == MODEL and agent["requests"] == len(usage) == 4
    assert agent["cached_tokens"] == read > 0 and agent["cache_write_tokens"] == written > 0
    assert agent["input_tokens"] == fresh + read + written
    price = price_table().lookup(MODEL)
    assert price is not None and price.cache_write == pytest.approx(3.75)
    expected = (fresh * 3.00 + read * 0.30 + written * 3.75 + output * 15.00) / 1_000_000
    assert agent["dollars"] == pytest.approx(expected, abs=1e-6)
    usage_records = [r for r in records if r["type"] == "usage"]
    assert [r["cache_write_tokens"] for r in usage_records] == [
        u["cache_creation_input_tokens"] for u in usage[2:]
    ]


def test_continuing_after_the_cache_expired_says_what_re_caching_costs(
    anthropic_server: AnthropicServer, llm_server: OpenAIServer, workspace: Path
) -> None:
    env = anthropic_env(anthropic_server)
    first = forge_run(llm_server, workspace, "--output", "jsonl", "hello", env=env)
    assert first.returncode == 0, first.stderr
    again = forge_run(llm_server, workspace, "--continue", "--output", "jsonl", "hi", env=env)
    assert again.returncode == 0, again.stderr
    assert "re-caches" not in again.stderr  # the cache is warm: nothing to say

    # Make every message an hour older: the 5-minute cache has expired.
    (session,) = (workspace.parent / "home").rglob("*.jsonl")
    aged = [json.dumps(_older(json.loads(line), 3600)) for line in session.read_text().splitlines()]
    session.write_text("\n".join(aged) + "\n")
    requests_before = len(anthropic_server.requests)
    later = forge_run(llm_server, workspace, "--continue", "--output", "jsonl", "more", env=env)

    assert later.returncode == 0, later.stderr
    notice = next(line for line in later.stderr.splitlines() if "re-caches" in line)
    assert "forge run: Resuming re-caches" in notice and "≈ $" in notice
    assert "last request 60 min ago" in notice
    assert len(anthropic_server.requests) == requests_before + 1


def _older(value: Any, seconds: float) -> Any:
    """`value` with every `created_at` inside it moved `seconds` into the past."""
    if isinstance(value, dict):
        return {
            key: item - seconds
            if key == "created_at" and isinstance(item, float)
            else _older(item, seconds)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_older(item, seconds) for item in value]
    return value
