"""ToolRegistry: specs for the provider, lookup, and calls that never raise for bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forge.agent.tools.base import Tool, ToolContext, ToolError, ToolResult
from forge.agent.tools.registry import ToolRegistry, default_registry
from forge.llm.messages import ToolCall
from forge.llm.protocols import ToolSpec

ALL_TOOLS = [
    "read_file",
    "write_file",
    "apply_diff",
    "list_files",
    "search_files",
    "execute_command",
    "update_plan",
    "ask_question",
    "converse",
    "task_completion",
]


class BrokenTool(Tool[dict[str, Any]]):
    """A tool with a bug: it raises something other than ToolError."""

    spec = ToolSpec(name="broken", description="Always fails.", parameters={"type": "object"})

    def parse_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return arguments

    async def run(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        raise ZeroDivisionError("division by zero")


def test_default_registry_holds_every_tool() -> None:
    registry = default_registry()
    assert registry.names() == ALL_TOOLS
    assert [spec.name for spec in registry.specs()] == ALL_TOOLS


def test_specs_are_valid_function_definitions() -> None:
    for spec in default_registry().specs():
        wire = spec.to_api()
        assert wire["type"] == "function"
        parameters = wire["function"]["parameters"]
        assert parameters["type"] == "object"
        assert set(parameters.get("required", [])) <= set(parameters.get("properties", {}))
        assert wire["function"]["description"]


def test_mutating_and_loop_breaking_flags() -> None:
    registry = default_registry()
    mutating = {name for name in registry.names() if registry.get(name).mutates}
    breaking = {name for name in registry.names() if registry.get(name).loop_breaking}
    assert mutating == {"write_file", "apply_diff", "execute_command"}
    assert breaking == {"ask_question", "converse", "task_completion"}


def test_unknown_tool_names_the_available_ones() -> None:
    with pytest.raises(ToolError) as raised:
        default_registry().get("delete_everything")
    message = str(raised.value)
    assert message.startswith("unknown tool 'delete_everything'; available: read_file, ")


def test_duplicate_names_are_refused() -> None:
    registry = ToolRegistry([BrokenTool()])
    with pytest.raises(ValueError, match="already registered"):
        registry.register(BrokenTool())


def test_prepare_parses_and_validates() -> None:
    registry = default_registry()
    prepared = registry.prepare(
        ToolCall(id="c1", name="read_file", arguments='{"path": "a.py", "start_line": "3"}')
    )
    assert prepared.tool.name == "read_file"
    assert prepared.arguments == {"path": "a.py", "start_line": 3}
    with pytest.raises(ToolError, match="not valid JSON"):
        registry.prepare(ToolCall(id="c2", name="read_file", arguments='{"path": '))


async def _execute(name: str, arguments: str, workspace: Path) -> ToolResult:
    registry = ToolRegistry([*(default_registry().get(n) for n in ALL_TOOLS), BrokenTool()])
    return await registry.execute(
        ToolCall(id="c1", name=name, arguments=arguments), ToolContext(workspace=workspace)
    )


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("nope", "{}", "unknown tool 'nope'; available:"),
        ("read_file", '{"path": ', "read_file: arguments are not valid JSON"),
        ("read_file", "[1, 2]", "arguments must be a JSON object"),
        ("read_file", "{}", "missing required argument 'path'"),
        ("read_file", '{"path": 7}', "argument 'path' must be a string, got integer"),
        ("read_file", '{"path": "a", "end_line": "x"}', "'end_line' must be an integer"),
        ("list_files", '{"recursive": "maybe"}', "'recursive' must be a boolean, got string"),
        ("apply_diff", '{"path": "a", "blocks": "x"}', "'blocks' must be an array"),
        ("broken", "{}", "broken failed: ZeroDivisionError: division by zero"),
    ],
)
async def test_bad_calls_become_error_results(
    workspace: Path, name: str, arguments: str, expected: str
) -> None:
    result = await _execute(name, arguments, workspace)
    assert result.is_error
    assert expected in result.content


async def test_empty_arguments_mean_no_arguments(workspace: Path) -> None:
    (workspace / "a.txt").write_text("")
    result = await _execute("list_files", "", workspace)
    assert result.content == "a.txt"


async def test_null_optional_arguments_are_treated_as_absent(workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    result = await _execute("read_file", '{"path": "a.txt", "start_line": null}', workspace)
    assert not result.is_error, result.content
    assert result.content.splitlines()[1] == "1 | x"


async def test_a_successful_call(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    result = await _execute("read_file", '{"path": "a.txt"}', workspace)
    assert not result.is_error
    assert "1 | hello" in result.content
