"""Deferred MCP tools end to end (docs/adr/0054): a real stdio MCP server (the official SDK)
with 120 tools, a real session against the loopback OpenAI-compatible server.

What is compared: the OpenAI-compatible API renders the tools ahead of the messages, and
Forge's body holds `messages` before `tools`, so no request body's bytes can begin another's.
What a load must keep is each part's bytes: the `tools` array of a request is the previous
request's `tools` array with the loaded definitions appended (its bytes up to the closing
bracket begin the next one's), the `messages` array likewise, and every other field (model,
stream options, tool choice) is the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import SecretStr

from forge.agent.events import ToolCallFinished
from forge.config.settings import (
    ContextSettings,
    LLMSettings,
    McpSettings,
    Settings,
    ToolsSettings,
)
from forge.session.build import SessionOptions, build_session
from tests.agent.loop_harness import drive, finished, of_type
from tests.mcp.catalogs import catalog_server, extends, forge_catalog, raw_fields
from tests.support.anthropic_server import Answer, AnthropicServer, Search, Use
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Text, ToolCalls

KEY = "sk-test-deferred-0123456789"
LOADED = ["forgehub__create_issue", "forgehub__list_commit"]


def settings_for(server: OpenAIServer, catalog: Path, **mcp: object) -> Settings:
    return Settings(
        llm=LLMSettings(base_url=server.base_url, api_key=SecretStr(KEY), max_retries=0),
        tools=ToolsSettings(auto_approve=["forgehub__*"]),
        context=ContextSettings(max_tokens=60_000),
        mcp=McpSettings.model_validate(mcp),
        mcp_servers={"forgehub": catalog_server(catalog, forge_catalog())},
    )


def tool_names(request: RecordedRequest) -> list[str]:
    return [tool["function"]["name"] for tool in request.tools]


def assert_appends(earlier: RecordedRequest, later: RecordedRequest) -> None:
    """`later` keeps every byte of `earlier`'s tools and messages, adding only at the end."""
    before, after = raw_fields(earlier.raw), raw_fields(later.raw)
    assert extends(before["tools"], after["tools"])
    assert extends(before["messages"], after["messages"])
    rest = {key: value for key, value in before.items() if key not in ("tools", "messages")}
    assert rest == {key: after[key] for key in rest}


async def test_deferred_tools_load_by_tool_search_and_only_append_to_the_request(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("tool_search", {"query": f"select:{','.join(LOADED)}"})]),
        ToolCalls([Call("forgehub__create_issue", {"owner": "o", "repo": "r", "title": "Bug"})]),
        Text("filed"),
        Text("and again"),
    )
    session = build_session(settings_for(llm_server, tmp_path / "catalog.json"), workspace)
    try:
        events = await drive(session.run_turn("file an issue about the bug"))
        events += await drive(session.run_turn("thanks"))
        # /context: what is sent and what is deferred; /mcp: which tools are loaded.
        line = session.reports.mcp_definitions_line()
        assert line.startswith("MCP tool definitions sent with every request: 3 tools, ")
        assert "(`tool_search` and 2 loaded); deferred: 118 tools, " in line
        report = session.reports.mcp()
        assert "- `forgehub__create_issue` (loaded) — Create a issue in a repository" in report
        assert "- `forgehub__get_issue` — Get a issue" in report
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"
    first, second, third, fourth = llm_server.requests
    # The first request carries none of the 120 tools: `tool_search` stands for them, and
    # the system prompt names the server, what it is for and how many tools it has.
    assert not [name for name in tool_names(first) if name.startswith("forgehub__")]
    assert "tool_search" in tool_names(first)
    system = first.messages[0]["content"]
    assert "- forgehub (120 tools): Issues, pull requests and code" in system
    # `tool_search` loaded two: the next request appends exactly those, after the others.
    assert tool_names(second) == tool_names(first) + LOADED
    assert_appends(first, second)
    assert_appends(second, third)
    assert raw_fields(second.raw)["tools"] == raw_fields(third.raw)["tools"]
    assert_appends(third, fourth)
    assert fourth.messages[0]["content"] == system
    # The loaded tool was called on the real server and answered.
    results = {event.call.name: event.result for event in of_type(events, ToolCallFinished)}
    assert "2 tools loaded" in results["tool_search"]
    answer = json.loads(results["forgehub__create_issue"])
    assert answer == {
        "tool": "create_issue",
        "arguments": {"owner": "o", "repo": "r", "title": "Bug"},
    }


async def test_loaded_tools_survive_continue_with_the_same_prompt_bytes(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("tool_search", {"query": "create issue"})]),
        Text("loaded"),
        Text("resumed"),
    )
    settings = settings_for(llm_server, tmp_path / "catalog.json")
    session = build_session(settings, workspace)
    try:
        await drive(session.run_turn("find the issue tool"))
    finally:
        await session.aclose()
    loaded_before = raw_fields(llm_server.requests[1].raw)
    assert "forgehub__create_issue" in loaded_before["tools"]
    records = [
        json.loads(line)
        for line in session.log.path.read_text().splitlines()
        if '"mcp_tools"' in line
    ]
    assert records[-1]["deferring"] is True
    assert "forgehub__create_issue" in records[-1]["loaded"]

    resumed = build_session(settings, workspace, SessionOptions(resume_latest=True))
    try:
        await drive(resumed.run_turn("go on"))
    finally:
        await resumed.aclose()
    after = raw_fields(llm_server.requests[2].raw)
    assert after["tools"] == loaded_before["tools"]
    assert extends(loaded_before["messages"], after["messages"])


async def test_never_sends_every_tool_and_offers_no_search(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    llm_server.enqueue(Text("ok"))
    settings = settings_for(llm_server, tmp_path / "catalog.json", defer_tools="never")
    session = build_session(settings, workspace)
    try:
        await session.servers.wait(60)  # "never" does not wait: the first turn may be quicker
        await drive(session.run_turn("hello"))
    finally:
        await session.aclose()
    (request,) = llm_server.requests
    names = tool_names(request)
    assert "tool_search" not in names
    assert len([name for name in names if name.startswith("forgehub__")]) == 120
    assert "MCP tools load on demand" not in request.messages[0]["content"]


async def test_on_the_anthropic_api_loads_append_to_the_tools_too(
    anthropic_server: AnthropicServer, workspace: Path, tmp_path: Path
) -> None:
    """Anthropic renders tools, then system, then messages; its cache marker sits on the last
    tool, so apart from that marker a load only appends (docs/adr/0054)."""
    anthropic_server.enqueue(
        Answer(calls=[Use("tool_search", {"query": "select:forgehub__create_issue"})]),
        Answer(calls=[Use("forgehub__create_issue", {"owner": "o", "repo": "r"})]),
        Answer("filed"),
    )
    # A model without the API's own tool search: Forge's `tool_search` (issue 38).
    settings = settings_for_anthropic(
        anthropic_server, tmp_path / "catalog.json", model="claude-sonnet-4-20250514"
    )
    session = build_session(settings, workspace)
    try:
        events = await drive(session.run_turn("file an issue"))
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"
    first, second, third = (json.loads(r.raw) for r in anthropic_server.requests)

    def unmarked(tools: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{k: v for k, v in tool.items() if k != "cache_control"} for tool in tools]

    assert [t["name"] for t in first["tools"]][-1] == "tool_search"
    assert unmarked(second["tools"])[:-1] == unmarked(first["tools"])
    assert second["tools"][-1]["name"] == "forgehub__create_issue"
    assert second["system"] == first["system"] and third["tools"] == second["tools"]
    assert second["messages"][: len(first["messages"])][:-1] == first["messages"][:-1]
    results = {event.call.name: event.result for event in of_type(events, ToolCallFinished)}
    assert json.loads(results["forgehub__create_issue"])["tool"] == "create_issue"


async def test_on_a_model_with_the_apis_tool_search_the_tools_go_deferred(
    anthropic_server: AnthropicServer, workspace: Path, tmp_path: Path
) -> None:
    """Claude Sonnet 4.5 has the Messages API's own tool search: every MCP tool is sent with
    `defer_loading: true` beside the API's search tool, Forge's `tool_search` is not offered,
    the search's blocks go back unchanged, and a load changes no byte of the tools (issue 38,
    docs/adr/0054)."""
    anthropic_server.enqueue(
        Answer(
            "Searching.",
            search=Search("open an issue", ["forgehub__create_issue"]),
            calls=[Use("forgehub__create_issue", {"owner": "o", "repo": "r"})],
        ),
        Answer("filed"),
    )
    settings = settings_for_anthropic(anthropic_server, tmp_path / "catalog.json")
    session = build_session(settings, workspace)
    try:
        events = await drive(session.run_turn("file an issue"))
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"
    first, second = (json.loads(r.raw) for r in anthropic_server.requests)
    names = [tool["name"] for tool in first["tools"]]
    assert "tool_search" not in names and names[-1] == "tool_search_tool_bm25"
    mcp_tools = [tool for tool in first["tools"] if tool["name"].startswith("forgehub__")]
    assert len(mcp_tools) >= 100 and all(tool["defer_loading"] is True for tool in mcp_tools)
    assert not any(tool.get("defer_loading") for tool in first["tools"] if tool not in mcp_tools)
    assert "tool_search_tool_bm25" in json.dumps(first["system"])
    assert second["tools"] == first["tools"] and second["system"] == first["system"]
    kinds = [block["type"] for block in second["messages"][1]["content"]]
    assert kinds == ["server_tool_use", "tool_search_tool_result", "text", "tool_use"]
    results = {event.call.name: event.result for event in of_type(events, ToolCallFinished)}
    assert json.loads(results["forgehub__create_issue"])["tool"] == "create_issue"


def settings_for_anthropic(
    server: AnthropicServer, catalog: Path, model: str = "claude-sonnet-4-5"
) -> Settings:
    llm = LLMSettings.model_validate(
        {
            "provider": "anthropic",
            "model": model,
            "base_url": server.base_url,
            "api_key": SecretStr(KEY),
            "max_retries": 0,
        }
    )
    return Settings(
        llm=llm,
        tools=ToolsSettings(auto_approve=["forgehub__*"]),
        context=ContextSettings(max_tokens=60_000),
        mcp_servers={"forgehub": catalog_server(catalog, forge_catalog())},
    )
