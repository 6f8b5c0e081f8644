"""`web_fetch` in a whole session: offered to the model, approved by `allow_domains`, and with
a `prompt` condensed by the summarization model while the full page stays recallable."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from forge.agent.tools.web_fetch import CONDENSE_INSTRUCTIONS
from forge.config.settings import Settings, ToolsSettings
from forge.session.build import build_session
from tests.agent.loop_harness import drive, finished
from tests.agent.tools.test_web_fetch import PAGE
from tests.session.test_session_core import settings_for
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Text, ToolCalls
from tests.support.web_server import WebServer

RECALL = re.compile(r"\[the full text: recall ([0-9a-f]{6})\]")


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        yield server


def with_web_fetch(server: OpenAIServer) -> Settings:
    settings = settings_for(server)
    tools = ToolsSettings.model_validate(
        {"web_fetch": {"allow_private": True, "allow_domains": ["127.0.0.1"]}}
    )
    return settings.model_copy(update={"tools": tools})


def tool_messages(request: RecordedRequest) -> list[dict[str, object]]:
    return [message for message in request.messages if message["role"] == "tool"]


async def test_a_prompt_condenses_the_page_and_the_full_text_is_recallable(
    llm_server: OpenAIServer, workspace: Path, web: WebServer
) -> None:
    web.page("/guide", PAGE)
    condense_requests: list[RecordedRequest] = []

    def respond(request: RecordedRequest) -> Text | ToolCalls:
        if request.messages[0]["content"] == CONDENSE_INSTRUCTIONS:
            condense_requests.append(request)
            return Text("Run `forge migrate` in every workspace.")
        tools = tool_messages(request)
        if not tools:
            return ToolCalls(
                [Call("web_fetch", {"url": web.url("/guide"), "prompt": "how do I migrate?"})]
            )
        key = RECALL.search(str(tools[-1]["content"]))
        if key and len(tools) == 1:
            return ToolCalls([Call("recall", {"id": key.group(1)})])
        return Text("done")

    llm_server.responder = respond
    session = build_session(with_web_fetch(llm_server), workspace)
    try:
        # No approval is scripted: the listed domain runs without asking.
        events = await drive(session.agent.run_turn("read the migration guide"))
    finally:
        await session.aclose()
        llm_server.responder = None
    assert finished(events).reason == "answered"

    assert "web_fetch" in [tool["function"]["name"] for tool in llm_server.requests[0].tools]
    assert len(condense_requests) == 1
    page_sent = str(condense_requests[0].messages[-1]["content"])
    assert "how do I migrate?" in page_sent and "Step one: upgrade" in page_sent

    final = tool_messages(llm_server.requests[-1])
    condensed, recalled = str(final[0]["content"]), str(final[1]["content"])
    assert condensed.startswith(web.url("/guide"))
    assert "Run `forge migrate` in every workspace." in condensed
    assert "Step one: upgrade" not in condensed  # only the answer entered the context
    assert "Step one: upgrade the `forge` package" in recalled  # the page, word for word
    assert recalled.startswith(web.url("/guide"))
