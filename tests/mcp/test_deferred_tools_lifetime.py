"""Loaded MCP tools last for the session (docs/adr/0054): through `/rewind` and compaction,
and into a subagent, whose own loads stay its own. A real stdio MCP server with 120 tools
and the loopback OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path

from forge.agent.events import ToolCallFinished
from forge.config.settings import ContextSettings, McpSettings, ToolsSettings
from forge.session.build import build_session
from tests.agent.subagents.support import CHILD_MODEL, PARENT_MODEL, drive, write_agent
from tests.agent.subagents.support import settings_for as subagent_settings
from tests.mcp.catalogs import catalog_server, forge_catalog, raw_fields
from tests.mcp.test_deferred_tools import settings_for, tool_names
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Text, ToolCalls


def select(*names: str) -> ToolCalls:
    return ToolCalls([Call("tool_search", {"query": f"select:{','.join(names)}"})])


async def test_loaded_tools_stay_after_rewind_and_compaction(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    def respond(request: RecordedRequest) -> Text | ToolCalls:
        if not request.tools:
            return Text("summary of the work")
        last = request.messages[-1]
        if last["role"] == "user" and "load" in str(last["content"]):
            return select("forgehub__create_issue")
        if last["role"] == "user" and "read" in str(last["content"]):
            return ToolCalls([Call("read_file", {"path": "a.txt"})])
        return Text("done")

    (workspace / "a.txt").write_text("some text\n" * 40)
    llm_server.responder = respond
    session = build_session(settings_for(llm_server, tmp_path / "catalog.json"), workspace)
    try:
        await drive(session.run_turn("load the issue tool"))
        loaded = raw_fields(llm_server.requests[-1].raw)["tools"]
        assert "forgehub__create_issue" in loaded
        # Going back to before the turn that loaded it keeps the tool (and the cache).
        session.history.rewind_conversation(session.history.turns()[0].id)
        await drive(session.run_turn("read a.txt"))
        assert raw_fields(llm_server.requests[-1].raw)["tools"] == loaded
        await drive(session.run_turn("read it again"))
        await drive(session.compact())
        await drive(session.run_turn("and after the summary"))
        assert raw_fields(llm_server.requests[-1].raw)["tools"] == loaded
    finally:
        await session.aclose()
    summaries = [request for request in llm_server.requests if not request.tools]
    assert summaries  # compaction ran


async def test_a_child_starts_with_the_parents_loads_and_keeps_its_own(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    write_agent(workspace, "finder")
    settings = subagent_settings(
        llm_server,
        tools=ToolsSettings(auto_approve=["forgehub__*"]),
        context=ContextSettings(max_tokens=60_000),
        mcp=McpSettings(),
        mcp_servers={"forgehub": catalog_server(tmp_path / "catalog.json", forge_catalog())},
    )
    llm_server.enqueue_for(
        PARENT_MODEL,
        select("forgehub__create_issue"),
        ToolCalls([Call("task", {"agent": "finder", "prompt": "list the commits"})]),
        Text("all done"),
    )
    llm_server.enqueue_for(
        CHILD_MODEL,
        select("forgehub__list_commit"),
        ToolCalls([Call("forgehub__list_commit", {"owner": "o", "repo": "r"})]),
        ToolCalls([Call("task_completion", {"result": "three commits"})]),
    )
    session = build_session(settings, workspace)
    try:
        events = await drive(session.run_turn("load the issue tool, then ask finder"))
    finally:
        await session.aclose()
    child = llm_server.requests_for(CHILD_MODEL)
    parent = llm_server.requests_for(PARENT_MODEL)
    # The child's first request has the parent's load, behind its own `tool_search`.
    assert [n for n in tool_names(child[0]) if "__" in n or n == "tool_search"] == [
        "tool_search",
        "forgehub__create_issue",
    ]
    assert tool_names(child[1])[-1] == "forgehub__list_commit"
    assert "MCP tools load on demand" in child[0].messages[0]["content"]
    # The child's load stayed its own: the parent never got `list_commit`.
    assert "forgehub__list_commit" not in tool_names(parent[-1])
    assert tool_names(parent[-1])[-1] == "forgehub__create_issue"
    assert session.agent.tool_deferral is not None
    assert session.agent.tool_deferral.loaded == ["forgehub__create_issue"]
    assert not [e for e in events if isinstance(e, ToolCallFinished) and e.is_error]
