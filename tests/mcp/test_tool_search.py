"""`tool_search` and the deferral decision (docs/adr/0054): BM25 over names, descriptions and
parameter names; `select:`; what "auto" decides; a deferred tool called before it is loaded.
The servers are real (the catalog server over stdio)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from forge.agent.mcp.deferral import ToolDeferral
from forge.agent.mcp.manager import McpServers
from forge.agent.mcp.tool_ranking import rank, words
from forge.agent.mcp.tool_search import ToolSearchArgs
from forge.agent.tools.base import ToolContext, ToolError
from forge.agent.tools.registry import ToolRegistry
from forge.llm.messages import ToolCall
from forge.llm.protocols import ToolSpec
from tests.mcp.catalogs import catalog_server, forge_catalog


def spec(name: str, description: str, *parameters: str) -> ToolSpec:
    properties = {parameter: {"type": "string"} for parameter in parameters}
    return ToolSpec(name, description, {"type": "object", "properties": properties})


SPECS = [
    spec("github__create_issue", "Create a new issue in a GitHub repository", "owner", "title"),
    spec("github__list_commits", "Get a list of commits of a branch", "owner", "sha"),
    spec("browser__navigate", "Navigate to a URL", "url"),
    spec("browser__take_screenshot", "Take a screenshot of the current page", "fullPage"),
    spec("sentry__get_issue_details", "Retrieve an error event's stack trace", "issueUrl"),
]


def test_words_split_names_and_take_plurals_off() -> None:
    assert words("create_pullRequest issues") == ["create", "pull", "request", "issue"]
    assert words("the page of a URL") == ["page", "url"]


def test_rank_finds_tools_by_name_description_and_parameter() -> None:
    assert rank("open a new issue on github", SPECS, 5)[0].name == "github__create_issue"
    assert rank("commits", SPECS, 5)[0].name == "github__list_commits"
    assert rank("screenshot of the page", SPECS, 5)[0].name == "browser__take_screenshot"
    assert rank("stack trace", SPECS, 5)[0].name == "sentry__get_issue_details"
    assert [r.name for r in rank("url", SPECS, 5)] == [
        "browser__navigate",
        "sentry__get_issue_details",  # found by its parameter `issueUrl`
    ]
    assert rank("weather forecast", SPECS, 5) == []
    assert len(rank("issue github page url commits", SPECS, 2)) == 2


@pytest.fixture
async def servers(tmp_path: Path, workspace: Path) -> AsyncIterator[McpServers]:
    entry = catalog_server(tmp_path / "catalog.json", forge_catalog())
    servers = McpServers({"forgehub": entry}, workspace)
    await servers.wait_settled(60)
    try:
        yield servers
    finally:
        await servers.aclose()


async def test_auto_defers_only_above_the_threshold(servers: McpServers) -> None:
    count = len  # one "token" per tool: 120
    below = ToolDeferral(servers, mode="auto", threshold=lambda: 120, count_tools=count)
    below.decide()
    assert not below.deferring and len(below.tools()) == 120 and below.listing == ""
    above = ToolDeferral(servers, mode="auto", threshold=lambda: 119, count_tools=count)
    above.decide()
    assert above.deferring and [t.name for t in above.tools()] == ["tool_search"]
    assert "- forgehub (120 tools): Issues, pull requests and code" in above.listing
    never = ToolDeferral(servers, mode="never", count_tools=count)
    never.decide()
    assert not never.deferring
    always = ToolDeferral(servers, mode="always", threshold=lambda: 10**9, count_tools=count)
    always.decide()
    assert always.deferring


async def test_tool_search_loads_matches_and_names_what_it_did_not_find(
    servers: McpServers, workspace: Path
) -> None:
    saved: list[dict[str, object]] = []
    deferral = ToolDeferral(servers, mode="always", record=saved.append)
    deferral.decide()
    registry = ToolRegistry()
    registry.add_source(deferral)
    context = ToolContext(workspace)
    search = deferral.search_tool

    # A deferred tool called before it is loaded says how to load it.
    called = await registry.execute(ToolCall("c1", "forgehub__create_issue", "{}"), context)
    assert called.is_error and 'call tool_search with query "select:forgehub__create_issue"' in (
        called.content
    )
    result = await search.run(ToolSearchArgs(query="create a new issue"), context)
    assert result.content.splitlines()[1].startswith("- forgehub__create_issue (loaded)")
    assert len(result.content.splitlines()) <= 6  # at most five matches
    assert deferral.loaded[0] == "forgehub__create_issue"
    assert saved[-1]["loaded"] == deferral.loaded
    again = await search.run(ToolSearchArgs(query="select:create_issue, nope"), context)
    assert "- forgehub__create_issue (already loaded)" in again.content
    assert "Unknown names, not loaded: nope" in again.content
    with pytest.raises(ToolError, match="no MCP tool matches"):
        await search.run(ToolSearchArgs(query="weather forecast"), context)
    # Loads append: the registry lists `tool_search`, then the loaded tools in load order.
    await search.run(ToolSearchArgs(query="select:forgehub__delete_tag"), context)
    names = registry.names()
    assert names[0] == "tool_search" and names[-1] == "forgehub__delete_tag"
    assert names[1:] == deferral.loaded
