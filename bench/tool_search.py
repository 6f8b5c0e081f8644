"""Section 9: deferred MCP tools behind `tool_search` (docs/adr/0054).

Five real stdio MCP servers (`tests/mcp/servers/catalog_server.py`) offer 120 tools named
and sized as real servers' (`bench.tool_catalogs`). A real `Session` (`build_session`, the
wiring of the TUI and `forge run`) runs one 40-request turn on the loopback OpenAI-compatible
server, twice: with `mcp.defer_tools: never` (every definition in every request) and with
the default `auto` (above 10 % of gpt-4o's 128k window, so deferred). The session uses six of
the tools; deferred, the model finds each with a `tool_search` whose query is words of the
task, then calls it (the request that searches is, when sending all, a `list_files` call).

Measured from the bytes each request sent: the tokens of its tool definitions (o200k, each
definition's JSON as sent), of the whole prompt, and its dollars under both price models. The
API renders the tools ahead of the messages, so a request's cached part is its common prefix
with the previous request over [tool definitions..., messages...] (a load appends a
definition at the end of the tools, so the messages after it are re-read uncached once):
OpenAI-style (gpt-4o: cached input at half price, no write premium) and Anthropic-style
(claude-sonnet-4-5: the prefix read at 0.1 x, the rest written at 1.25 x). Output tokens are
the same for both runs and left out.

A third row models Anthropic's native deferred loading on the deferred run's requests (the
loaded definitions expanded where the search result that loaded them is, so nothing before
is re-written): what Forge's own way costs against it (docs/adr/0054).

Targets: definition tokens per request -80 % or better, total dollars lower under both price
models, and each of the six tools found by its `tool_search` and called without an error.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.prices import ANTHROPIC_MAIN, ANTHROPIC_SUMMARIZATION, MAIN, anthropic_cost, session_cost
from bench.results import SectionResult, Table
from bench.tool_catalogs import USED, catalogs
from bench.tool_search_native import run_native
from forge.agent.events import ToolCallFinished
from forge.config.ephemeral import set_ephemeral
from forge.config.settings import Settings
from forge.llm.tokenizer import encoding_for_model
from forge.session.build import SessionOptions, build_session
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Reply, Text, ToolCalls

COMMAND = "python -m bench tool_search"
MODEL = "gpt-4o"
WINDOW = 128_000
REQUESTS = 40
CATALOG_SERVER = Path(__file__).resolve().parent.parent / "tests/mcp/servers/catalog_server.py"
TASK = (
    "Checkout fails with a 500. Get the Sentry issue details and its stack trace, list the "
    "recent commits of acme/shop, navigate the browser to the checkout page and take a "
    "screenshot, then create a GitHub issue and post a message to the Slack channel."
)
QUERIES = (
    "sentry issue details stack trace",
    "list recent commits",
    "navigate the browser to the page",
    "take a screenshot",
    "create a GitHub issue",
    "post a message to the Slack channel",
)
"""Each used tool's `tool_search` query: words of `TASK`."""
FILLERS_BETWEEN = 4
"""`list_files` requests after each use (the session's other work)."""
TARGET_DEFINITIONS = 0.20


def script(deferred: bool) -> list[Reply]:
    """The model's 40 replies: for each used tool a search (or, sending all, a `list_files`),
    its call, then other work; a final answer."""
    replies: list[Reply] = []
    step = 0

    def call(name: str, arguments: dict[str, Any]) -> ToolCalls:
        nonlocal step
        step += 1
        return ToolCalls([Call(name, arguments, id=f"c{step}")])

    for (server, tool, arguments), query in zip(USED, QUERIES, strict=True):
        if deferred:
            replies.append(call("tool_search", {"query": query}))
        else:
            replies.append(call("list_files", {"path": "."}))
        replies.append(call(f"{server}__{tool}", arguments))
        replies += [call("list_files", {"path": "."}) for _ in range(FILLERS_BETWEEN)]
    while len(replies) < REQUESTS - 1:
        replies.append(call("list_files", {"path": "."}))
    replies.append(Text("Filed acme/shop#42 with the screenshot and told the channel."))
    return replies


@dataclass
class Run:
    """One run's requests, measured."""

    name: str
    definitions: list[int] = field(default_factory=list)
    """Tokens of each request's tool definitions."""
    prompts: list[int] = field(default_factory=list)
    cached: int = 0
    """Prompt tokens that are the previous request's prefix (read from the cache)."""
    found: int = 0
    called: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def prompt_tokens(self) -> int:
        return sum(self.prompts)

    def openai_dollars(self) -> float:
        return session_cost(
            uncached_prompt=self.prompt_tokens - self.cached,
            cached_prompt=self.cached,
            agent_output=0,
            summary_input=0,
            summary_output=0,
            main=MAIN,
        )

    def anthropic_dollars(self) -> float:
        return anthropic_cost(
            read=self.cached,
            written=self.prompt_tokens - self.cached,
            uncached=0,
            agent_output=0,
            summary_input=0,
            summary_output=0,
            main=ANTHROPIC_MAIN,
            summarization=ANTHROPIC_SUMMARIZATION,
        )


def segments(
    request: RecordedRequest, count: Any, native: bool = False
) -> tuple[list[str], list[int], int]:
    """The request as the API renders it (tool definitions, then messages): each part's
    JSON, its tokens, and how many of the parts are tool definitions. `native` models
    Anthropic's own deferred loading: loaded MCP definitions are not in the tool list but
    expanded where the search result that loaded them is (docs/adr/0054)."""
    tools = {tool["function"]["name"]: tool for tool in request.tools}
    listed = [name for name in tools if not (native and "__" in name)]
    parts = [json.dumps(tools[name], separators=(",", ":")) for name in listed]
    for message in request.messages:
        parts.append(json.dumps(message, separators=(",", ":")))
        if native and message.get("role") == "tool":
            for name in _loaded_by(str(message.get("content") or "")):
                if name in tools:
                    parts.append(json.dumps(tools[name], separators=(",", ":")))
    return parts, [count(part) for part in parts], len(listed)


def _loaded_by(result: str) -> list[str]:
    """The tools a `tool_search` result says it loaded now."""
    return [
        line[2:].split(" ", 1)[0]
        for line in result.splitlines()
        if line.startswith("- ") and " (loaded): " in line
    ]


def measure(
    name: str, requests: Sequence[RecordedRequest], count: Any, native: bool = False
) -> Run:
    """Definition and prompt tokens per request, and the cached prefix of each."""
    run = Run(name)
    previous: list[str] = []
    for request in requests:
        parts, tokens, tools = segments(request, count, native)
        run.definitions.append(sum(tokens[:tools]))
        run.prompts.append(sum(tokens))
        same = 0
        for earlier, later in zip(previous, parts, strict=False):
            if earlier != later:
                break
            same += 1
        run.cached += sum(tokens[:same])
        previous = parts
    return run


async def session_run(
    server: OpenAIServer, workspace: Path, servers: dict[str, Any], mode: str
) -> list[ToolCallFinished]:
    """One turn of `TASK`; the finished tool calls."""
    settings = Settings.model_validate(
        {
            "llm": {"base_url": server.base_url, "api_key": "bench-key", "model": MODEL},
            "context": {"max_tokens": WINDOW},
            "mcp": {"defer_tools": mode},
            "mcp_servers": servers,
        }
    )
    session = build_session(
        settings, workspace, SessionOptions(approve_all=True, max_llm_calls=REQUESTS + 5)
    )
    finished: list[ToolCallFinished] = []
    try:
        await session.servers.wait(120)
        async for event in session.run_turn(TASK):
            if isinstance(event, ToolCallFinished):
                finished.append(event)
    finally:
        await session.aclose()
    return finished


def check(run: Run, finished: list[ToolCallFinished], deferred: bool) -> None:
    """Each used tool found (by its search, when deferred) and called without an error."""
    by_id = {event.call.id: event for event in finished}
    for index, (server, tool, _) in enumerate(USED):
        name = f"{server}__{tool}"
        search = by_id.get(f"c{index * (2 + FILLERS_BETWEEN) + 1}")
        if deferred:
            if search is None or search.is_error or f"- {name} " not in search.result:
                run.problems.append(f"tool_search {QUERIES[index]!r} did not find {name}")
            else:
                run.found += 1
        used = by_id.get(f"c{index * (2 + FILLERS_BETWEEN) + 2}")
        if used is None or used.is_error or json.loads(used.result).get("tool") != tool:
            run.problems.append(f"{name} was not called correctly")
        else:
            run.called += 1


def run() -> SectionResult:
    """Both runs, their table, and the targets as violations."""
    set_ephemeral()
    encoding = encoding_for_model(MODEL)

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    def definition_tokens(name: str, description: str, schema: dict[str, Any]) -> int:
        function = {"name": name, "description": description, "parameters": schema}
        return count(json.dumps({"type": "function", "function": function}))

    table = Table(
        f"One {REQUESTS}-request session, 5 MCP servers with 120 tools, 6 of them used",
        (
            "variant",
            "definitions/request",
            "first",
            "last",
            "prompt tokens",
            "cached",
            "OpenAI-style $",
            "Anthropic-style $",
            "found / called",
        ),
    )
    result = SectionResult("tool_search", "9. Deferred MCP tools (tool_search)", COMMAND, [table])
    server = OpenAIServer().start()
    runs: list[Run] = []
    try:
        with tempfile.TemporaryDirectory() as directory:
            root = Path(directory)
            workspace = root / "workspace"
            workspace.mkdir()
            (workspace / "README.md").write_text("shop\n")
            servers = {}
            for name, catalog in catalogs(definition_tokens).items():
                path = root / f"{name}.json"
                path.write_text(json.dumps(catalog), encoding="utf-8")
                servers[name] = {
                    "command": sys.executable,
                    "args": [str(CATALOG_SERVER), str(path)],
                }
            for mode, deferred in (("never", False), ("auto", True)):
                server.reset()
                server.enqueue(*script(deferred))
                finished = asyncio.run(session_run(server, workspace, servers, mode))
                measured = measure(
                    "deferred (auto)" if deferred else "all sent (never)", server.requests, count
                )
                check(measured, finished, deferred)
                runs.append(measured)
            modelled = measure("modelled: Anthropic native", server.requests, count, native=True)
            modelled.found, modelled.called = runs[-1].found, runs[-1].called
            native = run_native(workspace, servers, count, REQUESTS, FILLERS_BETWEEN)
    finally:
        server.stop()
    every, deferred_run = runs
    for measured in [*runs, modelled, native]:
        definitions = measured.definitions
        table.rows.append(
            (
                measured.name,
                f"{sum(definitions) / len(definitions):,.0f}",
                f"{definitions[0]:,}",
                f"{definitions[-1]:,}",
                f"{measured.prompt_tokens:,}",
                f"{measured.cached / measured.prompt_tokens:.0%}",
                f"{measured.openai_dollars():.3f}",
                f"{measured.anthropic_dollars():.3f}",
                f"{measured.found if measured is not every else '-'} / {measured.called}",
            )
        )
        result.violations += [f"{measured.name}: {problem}" for problem in measured.problems]
    ratio = sum(deferred_run.definitions) / sum(every.definitions)
    table.rows.append(
        (
            "deferred / all",
            f"{ratio:.2f}x",
            "",
            "",
            f"{deferred_run.prompt_tokens / every.prompt_tokens:.2f}x",
            "",
            f"{deferred_run.openai_dollars() / every.openai_dollars():.2f}x",
            f"{deferred_run.anthropic_dollars() / every.anthropic_dollars():.2f}x",
            "",
        )
    )
    counts = (len(every.prompts), len(deferred_run.prompts))
    if counts != (REQUESTS, REQUESTS):
        result.violations.append(f"expected {REQUESTS} requests in each run, got {counts}")
    if ratio > TARGET_DEFINITIONS:
        result.violations.append(f"definition tokens {ratio:.2f}x of all (target <= 0.20x)")
    if deferred_run.openai_dollars() >= every.openai_dollars():
        result.violations.append("OpenAI-style dollars not lower than sending all")
    if deferred_run.anthropic_dollars() >= every.anthropic_dollars():
        result.violations.append("Anthropic-style dollars not lower than sending all")
    if native.anthropic_dollars() >= every.anthropic_dollars():
        result.violations.append("Anthropic native dollars not lower than sending all")
    result.notes.append(
        "Modelled: Anthropic native = the deferred run's requests priced as Anthropic's "
        "`defer_loading` would render them (loaded definitions expanded at the search result "
        "instead of appended to the tools; deferred ones not billed). Anthropic native "
        "(defer_loading) = run: a real session on the loopback Messages API server with "
        f"claude-sonnet-4-5, every MCP tool sent deferred, the API's search (scripted) in the "
        f"reply that calls each tool, so {len(USED)} requests fewer "
        "(`bench.tool_search_native`). Both definitions columns count only the always-rendered "
        "tool list; its dollars are comparable with the Anthropic-style column only."
    )
    result.notes.append(
        "Cached = each request's common prefix with the previous one over [tool definitions, "
        "messages], as the API renders them; a load appends definitions after the others, so "
        "the messages after them are read uncached once (one cache re-write per batch of loads)."
    )
    return result


if __name__ == "__main__":
    print(run().report())
