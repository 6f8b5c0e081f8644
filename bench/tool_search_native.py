"""Section 9's Anthropic row: the same task on the loopback Messages API server with a model
that has the API's own tool search (claude-sonnet-4-5), run through a real `Session`: every
MCP tool is sent with `defer_loading: true` beside the API's BM25 search tool, and each used
tool is found by that search inside the reply that calls it (the loopback server scripts the
search's result, as the API would return it), so the run has one request less per used tool
(docs/adr/0054).

Measured as the API renders the request: the tools that are not deferred, the system prompt,
then the messages, with each definition a search referenced expanded where its result is (so a
load re-writes nothing before it). Cached is each request's common prefix with the previous
one over those parts; prices and tokens as in `bench.tool_search`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from bench.tool_catalogs import USED
from forge.agent.events import ToolCallFinished
from forge.config.settings import Settings
from forge.session.build import SessionOptions, build_session
from tests.support.anthropic_server import Answer, AnthropicServer, Search, Use

NATIVE_MODEL = "claude-sonnet-4-5"


def native_script(queries: tuple[str, ...], fillers: int, requests: int) -> list[Answer]:
    """The model's replies: for each used tool one reply that searches and calls it, then
    other work; a final answer. `requests` - 1 tool replies in all."""
    replies: list[Answer] = []
    step = 0
    for (server, tool, arguments), query in zip(USED, queries, strict=True):
        step += 1
        name = f"{server}__{tool}"
        search = Search(query, [name], id=f"srvtoolu_{step}")
        replies.append(Answer(search=search, calls=[Use(name, arguments, id=f"c{step}")]))
        for _ in range(fillers):
            step += 1
            replies.append(Answer(calls=[Use("list_files", {"path": "."}, id=f"c{step}")]))
    while len(replies) < requests - 1:
        step += 1
        replies.append(Answer(calls=[Use("list_files", {"path": "."}, id=f"c{step}")]))
    replies.append(Answer("Filed acme/shop#42 with the screenshot and told the channel."))
    return replies


def rendered_parts(body: dict[str, Any]) -> tuple[list[str], int]:
    """The request's parts as the API renders them, and how many are tool definitions (the
    always-rendered ones; an expanded definition counts with the messages it sits in)."""

    def plain(value: dict[str, Any]) -> str:
        kept = {k: v for k, v in value.items() if k not in ("cache_control", "defer_loading")}
        return json.dumps(kept, separators=(",", ":"))

    tools = body.get("tools") or []
    by_name = {str(tool.get("name")): tool for tool in tools}
    parts = [plain(tool) for tool in tools if not tool.get("defer_loading")]
    listed = len(parts)
    parts += [plain(block) for block in body.get("system") or []]
    for message in body.get("messages") or []:
        parts.append(json.dumps(message, separators=(",", ":")))
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_search_tool_result":
                for reference in (block.get("content") or {}).get("tool_references") or []:
                    tool = by_name.get(str(reference.get("tool_name")))
                    if tool is not None:
                        parts.append(plain(tool))
    return parts, listed


async def native_session(
    server: AnthropicServer, workspace: Path, servers: dict[str, Any], window: int, calls: int
) -> list[ToolCallFinished]:
    """One turn of the task on the Messages API with the API's own tool search."""
    from bench.tool_search import TASK

    settings = Settings.model_validate(
        {
            "llm": {
                "provider": "anthropic",
                "base_url": server.base_url,
                "api_key": "bench-key",
                "model": NATIVE_MODEL,
            },
            "context": {"max_tokens": window},
            "mcp": {"defer_tools": "auto"},
            "mcp_servers": servers,
        }
    )
    session = build_session(
        settings, workspace, SessionOptions(approve_all=True, max_llm_calls=calls)
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


def run_native(
    workspace: Path, servers: dict[str, Any], count: Any, requests: int, fillers: int
) -> Any:
    """The native row as a `bench.tool_search.Run` (found: the tools the API's search
    referenced and Forge sent deferred; called: each used tool called without an error)."""
    from bench.tool_search import QUERIES, WINDOW, Run

    server = AnthropicServer().start()
    wanted = requests - len(USED)
    try:
        server.enqueue(*native_script(QUERIES, fillers, wanted))
        finished = asyncio.run(native_session(server, workspace, servers, WINDOW, wanted + 5))
        bodies = [json.loads(request.raw) for request in server.requests]
    finally:
        server.stop()
    measured = Run("Anthropic native (defer_loading)")
    previous: list[str] = []
    for body in bodies:
        parts, listed = rendered_parts(body)
        tokens = [count(part) for part in parts]
        measured.definitions.append(sum(tokens[:listed]))
        measured.prompts.append(sum(tokens))
        same = 0
        for earlier, later in zip(previous, parts, strict=False):
            if earlier != later:
                break
            same += 1
        measured.cached += sum(tokens[:same])
        previous = parts
    if len(bodies) != wanted:
        measured.problems.append(f"expected {wanted} requests, got {len(bodies)}")
    deferred = {
        str(tool.get("name"))
        for tool in (bodies[0].get("tools") if bodies else None) or []
        if tool.get("defer_loading")
    }
    by_id = {event.call.id: event for event in finished}
    for index, (server_name, tool, _) in enumerate(USED):
        name = f"{server_name}__{tool}"
        if name in deferred:
            measured.found += 1
        else:
            measured.problems.append(f"{name} was not sent deferred")
        used = by_id.get(f"c{index * (1 + fillers) + 1}")
        if used is None or used.is_error or json.loads(used.result).get("tool") != tool:
            measured.problems.append(f"{name} was not called correctly")
        else:
            measured.called += 1
    return measured
