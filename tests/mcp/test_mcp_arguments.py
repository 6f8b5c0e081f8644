"""An MCP tool's arguments are checked against its server's schema before the call
(`forge.agent.mcp.arguments`, ADR 0040): the model reads the same one-line problems as for a
built-in tool, the same leniency applies, and a bad call never reaches the server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from forge.agent.mcp import McpServers
from forge.agent.mcp.arguments import SchemaArguments
from forge.agent.tools.base import ToolContext, ToolError
from forge.agent.tools.registry import ToolRegistry
from forge.llm.messages import ToolCall
from tests.mcp.conftest import stdio_settings


async def test_a_real_servers_schema_checks_the_arguments(tmp_path: Path) -> None:
    servers = McpServers({"tools": stdio_settings()}, tmp_path)
    await servers.wait_settled(60)
    registry = ToolRegistry()
    registry.add_source(servers)
    context = ToolContext(tmp_path)

    async def call(name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        result = await registry.execute(ToolCall("c1", name, json.dumps(arguments)), context)
        return result.is_error, result.content

    try:
        assert await call("tools__add", {"a": 2, "b": 40}) == (False, "42")
        # the built-in tools' leniency: numeric strings, integral floats, null for "not given"
        assert await call("tools__add", {"a": "2", "b": 40.0}) == (False, "42")
        assert await call("tools__add", {"a": 2}) == (
            True,
            "invalid arguments for tools__add: missing required argument 'b'",
        )
        assert await call("tools__add", {"a": 2, "b": None}) == (
            True,
            "invalid arguments for tools__add: missing required argument 'b'",
        )
        assert await call("tools__add", {"a": "two", "b": [1]}) == (
            True,
            "invalid arguments for tools__add: argument 'a' must be an integer, got string; "
            "argument 'b' must be an integer, got array",
        )
        assert await call("tools__echo", {}) == (
            True,
            "invalid arguments for tools__echo: missing required argument 'text'",
        )
        # What the schema allows goes through; the server judges the rest.
        failed, text = await call("tools__fail", {"reason": "no disk"})
        assert failed and "refused: no disk" in text
    finally:
        await servers.aclose()


SCHEMA = {
    "type": "object",
    "properties": {
        "colour": {"type": "string", "enum": ["red", "green"]},
        "coats": {"type": "integer", "minimum": 1, "maximum": 3},
        "dry": {"type": "boolean"},
        "steps": {"type": "array", "items": {"type": "object", "required": ["at"]}},
    },
    "required": ["colour"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"colour": "blue"}, "argument 'colour' must be one of 'red', 'green', got 'blue'"),
        ({"colour": "red", "coats": 0}, "argument 'coats' must be at least 1, got 0"),
        ({"colour": "red", "coats": 7}, "argument 'coats' must be at most 3, got 7"),
        ({"colour": "red", "dry": "maybe"}, "argument 'dry' must be a boolean, got string"),
        ({"colour": "red", "steps": [{}]}, "missing required argument 'steps[0].at'"),
        ({"colour": "red", "tint": 1}, "unknown argument 'tint'"),
    ],
)
def test_each_schema_problem_is_one_line(arguments: dict[str, Any], expected: str) -> None:
    with pytest.raises(ToolError) as raised:
        SchemaArguments("paint__it", SCHEMA).check(arguments)
    assert str(raised.value) == f"invalid arguments for paint__it: {expected}"


def test_leniency_and_a_broken_schema() -> None:
    checked = SchemaArguments("paint__it", SCHEMA).check(
        {"colour": "red", "coats": " 2 ", "dry": "False", "steps": None}
    )
    assert checked == {"colour": "red", "coats": 2, "dry": False}
    broken = SchemaArguments("odd__tool", {"type": "object", "properties": {"x": {"type": 5}}})
    assert broken.check({"x": "anything"}) == {"x": "anything"}  # the server judges it


def test_a_null_the_schema_allows_is_sent_as_null() -> None:
    schema = {"type": "object", "properties": {"note": {"type": ["string", "null"]}}}
    assert SchemaArguments("notes__add", schema).check({"note": None}) == {"note": None}
