"""The tool_search section's pieces: the scripted session and what is measured from the
requests (the section itself runs in `make bench`)."""

from __future__ import annotations

import json

from bench.tool_catalogs import SERVERS, USED, catalogs
from bench.tool_search import REQUESTS, measure, script, segments
from tests.support.openai_server import RecordedRequest, ToolCalls


def request(tools: list[str], messages: list[str]) -> RecordedRequest:
    body = {
        "tools": [{"type": "function", "function": {"name": name}} for name in tools],
        "messages": [{"role": "user", "content": text} for text in messages],
    }
    return RecordedRequest("/v1/chat/completions", {}, body, 0.0, raw=json.dumps(body).encode())


def test_the_script_has_forty_requests_and_searches_only_when_deferred() -> None:
    deferred, every = script(True), script(False)
    assert len(deferred) == len(every) == REQUESTS

    def names(replies: list[object]) -> list[str]:
        return [r.calls[0].name for r in replies if isinstance(r, ToolCalls)]

    assert names(deferred).count("tool_search") == len(USED)
    assert "tool_search" not in names(every)
    assert [n for n in names(deferred) if "__" in n] == [n for n in names(every) if "__" in n]


def test_measure_counts_definitions_and_the_cached_prefix() -> None:
    def count(text: str) -> int:
        return 10 if '"function"' in text else 1

    first = request(["a", "b"], ["hi"])
    second = request(["a", "b", "c"], ["hi", "more"])  # a load appends a definition
    measured = measure("run", [first, second], count)
    assert measured.definitions == [20, 30]
    assert measured.prompts == [21, 32]
    assert measured.cached == 20  # the two definitions; the message after the load is re-read


def test_the_catalogs_have_120_tools_of_the_sizes_aimed_at() -> None:
    made = catalogs(lambda name, description, schema: len(json.dumps(schema)) // 4)
    assert sum(len(catalog["tools"]) for catalog in made.values()) == 120
    assert set(made) == set(SERVERS)
    for server, tool, arguments in USED:
        (entry,) = [t for t in made[server]["tools"] if t["name"] == tool]
        assert set(entry["inputSchema"]["required"]) <= set(arguments)


def test_the_native_model_expands_loads_at_the_search_result() -> None:
    def count(text: str) -> int:
        return 10 if '"function"' in text else 1

    body = {
        "tools": [
            {"type": "function", "function": {"name": "tool_search"}},
            {"type": "function", "function": {"name": "s__t"}},
        ],
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "tool", "content": "1 tool loaded; call them directly:\n- s__t (loaded): T"},
            {"role": "user", "content": "more"},
        ],
    }
    loaded = RecordedRequest("/v1/chat/completions", {}, body, 0.0)
    parts, tokens, tools = segments(loaded, count, native=True)
    assert tools == 1  # only `tool_search` in the tool list
    assert tokens == [10, 1, 1, 10, 1]  # the definition right after the result that loaded it
    assert '"s__t"' in parts[3]
