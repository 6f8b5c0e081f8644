"""`forge run` reports the session's cost: in the jsonl `turn_finished` record, or as a line
on stderr in text mode (docs/adr/0029). A real subprocess against the loopback server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.headless.test_headless import forge_run, jsonl
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


def test_the_final_jsonl_record_carries_the_cost(llm_server: OpenAIServer, workspace: Path) -> None:
    llm_server.enqueue(
        ToolCalls(
            [Call("list_files", {})], prompt_tokens=10_000, completion_tokens=100, cached_tokens=0
        ),
        ToolCalls(
            [Call("task_completion", {"result": "done"})],
            prompt_tokens=12_000,
            completion_tokens=50,
            cached_tokens=8_000,
        ),
    )
    result = forge_run(
        llm_server, workspace, "--model", "gpt-4o", "--output", "jsonl", "look around"
    )

    assert result.returncode == 0, result.stderr
    final = jsonl(result)[-1]
    assert final["type"] == "turn_finished" and final["reason"] == "completed"
    cost = final["cost"]
    expected = (14_000 * 2.50 + 8_000 * 1.25 + 150 * 10.0) / 1_000_000
    assert cost["currency"] == "USD"
    assert cost["agent"] == pytest.approx(expected)
    assert cost["summarization"] == 0.0 and cost["total"] == pytest.approx(expected)
    (model,) = cost["models"]
    assert model == {
        "kind": "agent",
        "model": "gpt-4o",
        "requests": 2,
        "input_tokens": 22_000,
        "cached_tokens": 8_000,
        "cache_write_tokens": 0,
        "output_tokens": 150,
        "dollars": pytest.approx(expected),
    }


def test_an_unlisted_model_costs_unknown_and_text_mode_says_so_on_stderr(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        Text("hello", prompt_tokens=500, completion_tokens=5),
        Text("hello", prompt_tokens=500, completion_tokens=5),
    )
    text = forge_run(llm_server, workspace, "--model", "my-local-model", "hi")
    records = jsonl(
        forge_run(llm_server, workspace, "--model", "my-local-model", "--output", "jsonl", "hi")
    )

    assert text.returncode == 0, text.stderr
    assert "forge: cost unknown (agent unknown, summarization $0.00)" in text.stderr
    assert "cost" not in text.stdout
    assert records[-1]["cost"]["total"] is None and records[-1]["cost"]["agent"] is None
