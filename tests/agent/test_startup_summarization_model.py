"""`forge run` applies `llm.summarization_model` from the config file from the very first
summary: a real subprocess, a real config file, the loopback server's record of each request."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from forge.config.paths import config_path
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Reply, Text, ToolCalls

REPO_ROOT = Path(__file__).resolve().parents[2]
SUMMARY_MODEL = "cheap-summarizer"
MAIN_MODEL = "gpt-4o-mini"
EARLY_SUMMARIES = {
    # The tool-call strategy fires as soon as one group is one message old.
    "messages_old_threshold": 1,
    "min_tool_calls_to_summarize": 1,
    "max_tool_call_distance": 1,
    "tool_call_summaries": True,  # the LLM tier, not masking, takes aging groups
}


def write_data(workspace: Path) -> None:
    """Two files big enough that summarizing a read of one is worth an LLM call."""
    for number in (1, 2):
        lines = [f"record {number}-{line}: value {line * number} status ok" for line in range(80)]
        (workspace / f"data{number}.txt").write_text("\n".join(lines) + "\n")


def agent_script() -> list[Reply]:
    return [
        ToolCalls([Call("read_file", {"path": "data1.txt"})]),
        ToolCalls([Call("read_file", {"path": "data2.txt"})]),
        ToolCalls([Call("task_completion", {"result": "both files read"})]),
    ]


def respond_with(script: list[Reply]) -> object:
    def respond(request: RecordedRequest) -> Reply:
        if request.tools:  # an agent call; summaries are sent without tools
            return script.pop(0) if script else Text("done")
        return Text("I read a data file of numbered records, all ok.")

    return respond


def test_forge_run_uses_the_configured_summarization_model_from_the_first_summary(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_data(workspace)
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    config = {
        "llm": {"model": MAIN_MODEL, "summarization_model": SUMMARY_MODEL},
        "context": EARLY_SUMMARIES,
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    llm_server.responder = respond_with(agent_script())  # type: ignore[assignment]
    environment = dict(os.environ)  # the conftest's isolated XDG directories
    environment.update(
        PYTHONPATH=str(REPO_ROOT),
        OPENAI_BASE_URL=llm_server.base_url,
        OPENAI_API_KEY="sk-test-startup-0123456789",
        FORGE_LLM__MAX_RETRIES="0",
    )
    result = subprocess.run(
        [sys.executable, "-m", "forge", "run", "--yes", "--output", "jsonl", "read both files"],
        cwd=workspace,
        env=environment,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result.returncode == 0, result.stderr
    summaries = [request for request in llm_server.requests if not request.tools]
    agent_calls = [request for request in llm_server.requests if request.tools]
    assert summaries, "the config makes the tool-call strategy summarize during the run"
    assert summaries[0].model == SUMMARY_MODEL
    assert {request.model for request in summaries} == {SUMMARY_MODEL}
    assert {request.model for request in agent_calls} == {MAIN_MODEL}
