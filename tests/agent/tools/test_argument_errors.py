"""What the model reads when a call's arguments are wrong, and the leniency that spares it a
retry (ADR 0040): one line per problem naming the argument, never pydantic's own text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import Field

from forge.agent.tools.arguments import Integer, ModelTool, ToolArguments, tool_schema
from forge.agent.tools.base import ToolContext, ToolResult
from forge.agent.tools.registry import ToolRegistry, default_registry
from forge.llm.messages import ToolCall
from forge.llm.protocols import ToolSpec


class PaintArgs(ToolArguments):
    colour: Literal["red", "green"] = Field(description="The colour.")
    coats: Integer = Field(ge=1, le=3, description="How many coats.")


class PaintTool(ModelTool[PaintArgs]):
    """A tool with an enum and a bounded number, as a tool may declare them."""

    spec = ToolSpec(name="paint", description="Paint.", parameters=tool_schema(PaintArgs))
    arguments_model = PaintArgs

    async def run(self, args: PaintArgs, context: ToolContext) -> ToolResult:
        return ToolResult(content=f"{args.coats} x {args.colour}")


async def _call(name: str, arguments: dict[str, Any] | str, workspace: Path) -> ToolResult:
    registry = default_registry()
    registry.register(PaintTool())
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return await registry.execute(ToolCall("c1", name, text), ToolContext(workspace=workspace))


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        # a missing required argument (also one sent as null, and one inside an array item)
        ("read_file", {}, "invalid arguments for read_file: missing required argument 'path'"),
        ("read_file", {"path": None}, "missing required argument 'path'"),
        (
            "apply_diff",
            {"path": "a", "blocks": [{"search": "x"}]},
            "invalid arguments for apply_diff: missing required argument 'blocks[0].replace'",
        ),
        # a wrong type
        (
            "read_file",
            {"path": 7},
            "invalid arguments for read_file: argument 'path' must be a string, got integer",
        ),
        ("read_file", {"path": "a", "start_line": "one"}, "'start_line' must be an integer"),
        ("read_file", {"path": "a", "start_line": 1.5}, "'start_line' must be an integer"),
        ("list_files", {"recursive": "yes"}, "'recursive' must be a boolean, got string"),
        ("execute_command", {"command": "ls", "timeout": True}, "must be a number, got boolean"),
        ("update_plan", {"plan": [{"step": 3, "status": "done"}]}, "'plan[0].step' must be a"),
        # an unknown argument: named when the call fails anyway (a misspelling, usually)
        (
            "read_file",
            {"file_path": "a"},
            "invalid arguments for read_file: missing required argument 'path'; "
            "unknown argument 'file_path'",
        ),
        # an out-of-range number and a bad enum value
        (
            "paint",
            {"colour": "red", "coats": 0},
            "invalid arguments for paint: argument 'coats' must be at least 1, got 0",
        ),
        ("paint", {"colour": "red", "coats": 9}, "argument 'coats' must be at most 3, got 9"),
        (
            "paint",
            {"colour": "blue", "coats": 1},
            "invalid arguments for paint: argument 'colour' must be one of 'red' or 'green', "
            "got 'blue'",
        ),
    ],
)
async def test_each_kind_of_bad_argument_is_one_readable_line(
    workspace: Path, name: str, arguments: dict[str, Any], expected: str
) -> None:
    result = await _call(name, arguments, workspace)
    assert result.is_error
    assert expected in result.content
    assert "\n" not in result.content
    for pydantic_text in ("validation error", "input_value", "errors.pydantic.dev", "type="):
        assert pydantic_text not in result.content


async def test_every_problem_of_a_call_is_named(workspace: Path) -> None:
    result = await _call("paint", {"colour": 3, "coats": "many", "tint": 1}, workspace)
    assert result.content == (
        "invalid arguments for paint: argument 'colour' must be one of 'red' or 'green', "
        "got 3; argument 'coats' must be an integer, got string; unknown argument 'tint'"
    )


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"colour": "green", "coats": "2"}, "2 x green"),  # a numeric string
        ({"colour": "green", "coats": " 3 "}, "3 x green"),
        ({"colour": "green", "coats": 2.0}, "2 x green"),  # an integral float
        ({"colour": "green", "coats": 1, "brush": "wide"}, "1 x green"),  # extras are ignored
    ],
)
async def test_lenient_arguments_are_taken_as_meant(
    workspace: Path, arguments: dict[str, Any], expected: str
) -> None:
    result = await _call("paint", arguments, workspace)
    assert not result.is_error, result.content
    assert result.content == expected


async def test_lenient_booleans_numbers_and_nulls_reach_the_real_tools(workspace: Path) -> None:
    (workspace / "d").mkdir()
    (workspace / "d" / "f.txt").write_text("one\ntwo\nthree\n")
    listed = await _call("list_files", {"recursive": "TRUE", "path": None}, workspace)
    assert listed.content.splitlines() == ["d/", "d/f.txt"], listed.content
    read = await _call(
        "read_file", {"path": "d/f.txt", "start_line": "2", "end_line": 2.0}, workspace
    )
    assert read.content.splitlines()[1:] == ["2 | two"], read.content
    ran = await _call("execute_command", {"command": "echo ok", "timeout": "30"}, workspace)
    assert not ran.is_error and "ok" in ran.content


async def test_a_boolean_is_only_true_or_false(workspace: Path) -> None:
    for word in ("1", "yes", "on"):
        result = await _call("list_files", {"recursive": word}, workspace)
        assert result.is_error and "'recursive' must be a boolean, got string" in result.content


def test_the_registry_prepares_arguments_as_a_model_and_a_dict() -> None:
    registry = ToolRegistry([PaintTool()])
    prepared = registry.prepare(ToolCall("c1", "paint", '{"colour": "red", "coats": "2"}'))
    assert prepared.args == PaintArgs(colour="red", coats=2)
    assert prepared.arguments == {"colour": "red", "coats": 2}


def test_the_generated_schema_keeps_the_hand_written_shape() -> None:
    assert tool_schema(PaintArgs) == {
        "type": "object",
        "properties": {
            "colour": {"type": "string", "enum": ["red", "green"], "description": "The colour."},
            "coats": {
                "type": "integer",
                "maximum": 3,
                "minimum": 1,
                "description": "How many coats.",
            },
        },
        "required": ["colour", "coats"],
    }


class CornerArgs(ToolArguments):
    at: PaintArgs = Field(description="Where.")


def test_a_nested_model_is_inlined_with_the_fields_description() -> None:
    at = tool_schema(CornerArgs)["properties"]["at"]
    assert at["type"] == "object" and at["description"] == "Where."
    assert at["required"] == ["colour", "coats"] and "$ref" not in str(tool_schema(CornerArgs))
