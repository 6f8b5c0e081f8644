"""A subagent has `web_fetch` when its definition allows it, with the parent's settings."""

from __future__ import annotations

from pathlib import Path

from forge.session.build import build_session
from tests.agent.subagents.support import (
    CHILD_MODEL,
    PARENT_MODEL,
    drive,
    settings_for,
    write_agent,
)
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.support.web_server import WebServer


async def test_a_child_fetches_a_page_with_the_parents_web_fetch_settings(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "reader")
    write_agent(workspace, "coder", extra="tools: [read_file]\n")
    web_fetch = {"web_fetch": {"allow_private": True, "allow_domains": ["127.0.0.1"]}}
    with WebServer() as web:
        web.page("/notes.txt", "the release is on Friday", "text/plain")
        llm_server.enqueue_for(
            PARENT_MODEL,
            ToolCalls([Call("task", {"agent": "reader", "prompt": "read it"}, id="t1")]),
            ToolCalls([Call("task", {"agent": "coder", "prompt": "code it"}, id="t2")]),
            Text("done"),
        )
        llm_server.enqueue_for(
            CHILD_MODEL,
            ToolCalls([Call("web_fetch", {"url": web.url("/notes.txt")})]),
            Text("Friday"),
            Text("coded"),
        )
        session = build_session(settings_for(llm_server, tools=web_fetch), workspace)
        try:
            await drive(session.run_turn("when is the release?"), approve=False)
        finally:
            await session.aclose()

    reader_requests = llm_server.requests_for(CHILD_MODEL)[:2]
    coder_request = llm_server.requests_for(CHILD_MODEL)[2]
    assert "web_fetch" in [tool["function"]["name"] for tool in reader_requests[0].tools]
    # Approved by allow_domains (every approval here is rejected) and fetched.
    fetched = reader_requests[1].messages[-1]
    assert fetched["role"] == "tool" and "the release is on Friday" in str(fetched["content"])
    assert "web_fetch" not in [tool["function"]["name"] for tool in coder_request.tools]
