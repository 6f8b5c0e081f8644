"""Checking a model's tool-call arguments against the tool's JSON schema.

Models make small mistakes (a missing argument, a number sent as a string). This module checks
the subset of JSON Schema the tools use — `type`, `properties`, `required`, `items`, `enum` —
and reports every problem in words the model can act on. Two lenient coercions spare a retry:
an integer or number sent as a numeric string, and a boolean sent as "true"/"false". Unknown
extra arguments are ignored.
"""

from __future__ import annotations

from typing import Any

from forge.agent.tools.base import ToolError
from forge.llm.protocols import ToolSpec

_TYPE_NAMES = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    list: "array",
    dict: "object",
    type(None): "null",
}


def validate_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments checked (and leniently coerced) against `spec.parameters`.

    Raises `ToolError` naming every problem, e.g. "missing required argument 'path'".
    """
    problems: list[str] = []
    value = _check(spec.parameters, arguments, "", problems)
    if problems:
        listing = "; ".join(problems)
        raise ToolError(f"invalid arguments for {spec.name}: {listing}")
    assert isinstance(value, dict)
    return value


def _check(schema: dict[str, Any], value: Any, where: str, problems: list[str]) -> Any:
    """`value` checked against `schema`; problems appended; returns the (coerced) value."""
    expected = schema.get("type")
    if isinstance(expected, str):
        value = _coerce(expected, value)
        if not _is_type(expected, value):
            label = f"argument '{where}'" if where else "arguments"
            problems.append(f"{label} must be {_article(expected)}, got {_type_name(value)}")
            return value
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(repr(choice) for choice in schema["enum"])
        problems.append(f"argument '{where}' must be one of {choices}")
    if isinstance(value, dict):
        return _check_object(schema, value, where, problems)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [
            _check(schema["items"], item, f"{where}[{index}]", problems)
            for index, item in enumerate(value)
        ]
    return value


def _check_object(
    schema: dict[str, Any], value: dict[str, Any], where: str, problems: list[str]
) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    prefix = f"{where}." if where else ""
    for name in schema.get("required", ()):
        if name not in value or value[name] is None:
            problems.append(f"missing required argument '{prefix}{name}'")
    checked = dict(value)
    for name, item in value.items():
        # A null for an optional argument means "not given"; models send it often.
        if item is None and name not in schema.get("required", ()):
            del checked[name]
            continue
        if name in properties:
            checked[name] = _check(properties[name], item, f"{prefix}{name}", problems)
    return checked


def _coerce(expected: str, value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if expected == "integer":
            try:
                return int(text)
            except ValueError:
                return value
        if expected == "number":
            try:
                return float(text)
            except ValueError:
                return value
        if expected == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true"
    if expected == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _is_type(expected: str, value: Any) -> bool:
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    python_type = {
        "string": str,
        "boolean": bool,
        "array": list,
        "object": dict,
        "null": type(None),
    }.get(expected)
    return python_type is None or isinstance(value, python_type)


def _type_name(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _article(type_name: str) -> str:
    return f"an {type_name}" if type_name[0] in "aeiou" else f"a {type_name}"
