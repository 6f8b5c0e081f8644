"""Budgets hold without usage (issue 34): a server that reports no usage, or a usage that
fails validation, has its requests priced from Forge's own token counts, marked estimated in
`result`, and `--max-budget-usd` stops on the estimate — on both APIs. A float usage field
leaves no pydantic warning on stderr."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.test_anthropic_run import anthropic_env
from tests.headless.test_forge_run_limits import result_of
from tests.headless.test_headless import forge_run
from tests.support.anthropic_server import Answer, AnthropicServer, Use
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, ToolCalls

BIG = "".join(f"line {n}: {'lorem ipsum dolor sit amet ' * 6}\n" for n in range(400))
"""About 20k tokens: each request that carries it costs $0.003 at gpt-4o-mini's $0.15 per
million prompt tokens, $0.06 at claude-sonnet-4-5's $3."""


@pytest.fixture
def no_usage(llm_server: OpenAIServer) -> Iterator[OpenAIServer]:
    llm_server.usage_mode = "none"
    yield llm_server
    llm_server.usage_mode = "reported"


def read_again(request: RecordedRequest) -> ToolCalls:
    return ToolCalls([Call("read_file", {"path": "big.txt"})], text="Reading again.")


def assert_stopped_on_the_estimate(run_result: object, limit: float) -> None:
    result = result_of(run_result)
    assert result["subtype"] == "error_max_budget", result
    assert result["cost_estimated"] is True
    assert result["total_cost_usd"] >= limit
    assert result["usage"]["input_tokens"] > 0


def test_a_server_without_usage_is_priced_from_forges_counts_and_the_budget_stops(
    no_usage: OpenAIServer, workspace: Path
) -> None:
    (workspace / "big.txt").write_text(BIG)
    no_usage.responder = read_again
    run = forge_run(
        no_usage, workspace, "--max-budget-usd", "0.005", "--output-format", "forge-jsonl", "x"
    )

    assert run.returncode == 4, run.stderr
    assert 2 <= len(no_usage.requests) <= 4  # not 61
    assert_stopped_on_the_estimate(run, 0.005)


def test_a_usage_that_fails_validation_is_estimated_too(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "big.txt").write_text(BIG)

    def respond(request: RecordedRequest) -> ToolCalls:
        reply = read_again(request)
        reply.completion_tokens = 12.5  # type: ignore[assignment]  # a broken proxy
        return reply

    llm_server.responder = respond
    run = forge_run(
        llm_server, workspace, "--max-budget-usd", "0.005", "--output-format", "forge-jsonl", "x"
    )

    assert run.returncode == 4, run.stderr
    assert_stopped_on_the_estimate(run, 0.005)


@pytest.mark.parametrize(
    "patch",
    [
        {"cache_creation_input_tokens": 2.5},  # a float: no pydantic warning on stderr
        {
            key: None
            for key in (
                "input_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
                "output_tokens",
            )
        },
    ],
    ids=["float-usage", "no-usage"],
)
def test_the_messages_api_without_trusted_usage_is_estimated_and_the_budget_stops(
    anthropic_server: AnthropicServer,
    llm_server: OpenAIServer,
    workspace: Path,
    patch: dict[str, object],
) -> None:
    (workspace / "big.txt").write_text(BIG)
    anthropic_server.usage_patch = patch
    anthropic_server.responder = lambda record: Answer(
        "Reading again.", calls=[Use("read_file", {"path": "big.txt"})]
    )
    run = forge_run(
        llm_server,
        workspace,
        "--max-budget-usd",
        "0.1",
        "--output-format",
        "forge-jsonl",
        "x",
        env=anthropic_env(anthropic_server),
    )

    assert run.returncode == 4, run.stderr
    assert len(anthropic_server.requests) <= 4
    assert_stopped_on_the_estimate(run, 0.1)
    assert "pydantic" not in run.stderr.lower() and "Expected `int`" not in run.stderr


def test_a_childs_requests_without_usage_count_toward_the_budget(
    no_usage: OpenAIServer, workspace: Path
) -> None:
    folder = workspace / ".forge" / "agents"
    folder.mkdir(parents=True)
    (folder / "finder.md").write_text(
        "---\nname: finder\ndescription: finds things\nmodel: gpt-4o\n---\nFind things.\n"
    )
    (workspace / "big.txt").write_text(BIG)
    no_usage.enqueue_for(
        "gpt-4o",
        ToolCalls([Call("task", {"agent": "finder", "prompt": "look"}, id="t1")]),
        ToolCalls([Call("read_file", {"path": "big.txt"})], text="child: reading"),
        ToolCalls([Call("read_file", {"path": "big.txt"})], text="child: again"),
        ToolCalls([Call("read_file", {"path": "big.txt"})], text="child: and again"),
        ToolCalls([Call("read_file", {"path": "big.txt"})], text="child: once more"),
    )
    run = forge_run(
        no_usage,
        workspace,
        "--model",
        "gpt-4o",
        "--max-budget-usd",
        "0.05",
        "--output-format",
        "forge-jsonl",
        "go",
    )

    # gpt-4o at $2.50 a million: each child request carrying big.txt is about $0.05.
    assert_stopped_on_the_estimate(run, 0.05)
    child = result_of(run)["subagents"][0]
    assert child["agent"] == "finder" and child["dollars"] > 0
    assert no_usage.pending > 0  # the child was stopped before its script ran out
