"""Anthropic's own tool search on the wire (issue 38, docs/adr/0054): deferred tools go with
`defer_loading: true` and the BM25 tool search tool last; the reply's `server_tool_use` and
`tool_search_tool_result` blocks are kept on the message (and in the session file) and sent
back unchanged, so the tools they loaded stay loaded — against the loopback Messages server,
which refuses what the API refuses."""

from __future__ import annotations

from forge.llm.anthropic_wire import SERVER_BLOCKS_META_KEY, TOOL_SEARCH_TOOL
from forge.llm.messages import Message, system, tool_result, user
from forge.llm.protocols import ToolSpec
from tests.llm.test_anthropic_provider import collect, provider
from tests.support.anthropic_server import Answer, AnthropicServer, Search, Use

SCHEMA = {"type": "object", "properties": {"repo": {"type": "string"}}}
TOOLS = [
    ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {}}}),
    ToolSpec("mcp__github__list_issues", "List a repository's issues", SCHEMA, defer_loading=True),
    ToolSpec("mcp__github__create_issue", "Open an issue", SCHEMA, defer_loading=True),
]


async def test_deferred_tools_are_sent_deferred_and_a_search_result_goes_back_unchanged(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.enqueue(
        Answer(
            "Looking for the issue tools.",
            search=Search("list github issues", ["mcp__github__list_issues"]),
            calls=[Use("mcp__github__list_issues", {"repo": "forge"}, id="toolu_1")],
        ),
        Answer("There are 3 issues."),
    )
    history: list[Message] = [system("sys"), user("how many issues are open?")]
    async with provider(anthropic_server) as client:
        _, first = await collect(client, history, TOOLS)
        # Through the session file and back, as a resumed session would send it.
        kept = Message.from_record(first.message.to_record())
        history += [kept, tool_result(kept.tool_calls[0], "3 issues")]
        _, second = await collect(client, history, TOOLS)

    tools = anthropic_server.requests[0].tools
    assert [tool.get("name") for tool in tools] == [
        "read_file",
        "mcp__github__list_issues",
        "mcp__github__create_issue",
        "tool_search_tool_bm25",
    ]
    assert [tool.get("defer_loading") for tool in tools[:3]] == [None, True, True]
    assert {k: v for k, v in tools[-1].items() if k != "cache_control"} == TOOL_SEARCH_TOOL
    assert "cache_control" in tools[-1]  # the marker sits on a tool that is always rendered

    blocks = first.message.meta[SERVER_BLOCKS_META_KEY]
    assert blocks == [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_test_1",
            "name": "tool_search_tool_bm25",
            "input": {"query": "list github issues"},
        },
        {
            "type": "tool_search_tool_result",
            "tool_use_id": "srvtoolu_test_1",
            "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": [
                    {"type": "tool_reference", "tool_name": "mcp__github__list_issues"}
                ],
            },
        },
    ]
    assert [call.name for call in first.message.tool_calls] == ["mcp__github__list_issues"]
    assert first.message.content == "Looking for the issue tools."
    sent = anthropic_server.requests[1].messages[1]["content"]
    assert sent[:2] == blocks and [b["type"] for b in sent[2:]] == ["text", "tool_use"]
    assert anthropic_server.requests[1].tools == tools  # loading re-wrote nothing
    assert second.message.content == "There are 3 issues."


async def test_without_deferred_tools_nothing_changes(anthropic_server: AnthropicServer) -> None:
    anthropic_server.enqueue(Answer("ok"))
    plain = [ToolSpec(spec.name, spec.description, spec.parameters) for spec in TOOLS]
    async with provider(anthropic_server) as client:
        await collect(client, [system("sys"), user("hi")], plain)
    tools = anthropic_server.requests[0].tools
    assert [tool["name"] for tool in tools] == [spec.name for spec in TOOLS]
    assert not any("defer_loading" in tool for tool in tools)


async def test_the_loopback_server_refuses_a_search_result_that_was_dropped(
    anthropic_server: AnthropicServer,
) -> None:
    # What the API refuses if the kept blocks were lost: a deferred tool called, never loaded.
    anthropic_server.enqueue(
        Answer("", calls=[Use("mcp__github__list_issues", {"repo": "forge"}, id="toolu_2")]),
        Answer("never"),
    )
    history: list[Message] = [system("sys"), user("issues?")]
    async with provider(anthropic_server, max_retries=0) as client:
        _, first = await collect(client, history, TOOLS)
        history += [first.message, tool_result(first.message.tool_calls[0], "3")]
        try:
            await collect(client, history, TOOLS)
        except Exception as error:  # the provider's typed error for a 400
            refused = str(error)
        else:
            refused = ""
    assert "is deferred and not loaded" in refused


def test_a_deferred_definition_is_not_counted_into_the_prompt() -> None:
    from forge.llm.tokenizer import CharEstimateCounter

    counter = CharEstimateCounter()
    shown = [spec for spec in TOOLS if not spec.defer_loading]
    assert counter.count_tools(TOOLS) == counter.count_tools(shown)


def test_which_models_have_the_apis_tool_search() -> None:
    from forge.llm.anthropic_wire import supports_tool_search

    assert supports_tool_search("claude-sonnet-4-5")
    assert supports_tool_search("claude-opus-4-5-20251101")
    assert not supports_tool_search("claude-sonnet-4-20250514")
    assert not supports_tool_search("claude-haiku-4-5")
    assert not supports_tool_search("claude-3-5-sonnet-20241022")
