"""Checking a model's arguments for an MCP tool against the schema its server declared.

An MCP tool has no pydantic model, only its server's `inputSchema`; `jsonschema` (which the
`mcp` SDK itself depends on) checks the arguments against it before Forge asks the user or
calls the server, so a bad call costs no approval and no round trip, and the model reads the
problems in the same words as for a built-in tool ("missing required argument 'path'").
The leniency is the built-in tools' too: a null for an argument whose schema has no null
means "not given" (a required one is then missing), and a numeric string or "true"/"false"
is taken where the schema wants a number or a boolean. A schema that is itself broken checks
nothing: the server judges the call. See docs/adr/0040-tool-arguments-as-models.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from forge.agent.tools.arguments import argument_path, json_type_name, lenient_value
from forge.agent.tools.base import ToolError

if TYPE_CHECKING:
    from jsonschema import ValidationError

MAX_PROBLEM = 200
"""Characters of one problem line (a server's enum or pattern can be long)."""


class SchemaArguments:
    """The arguments check of one MCP tool: `check(arguments)` returns them (leniently
    coerced) or raises `ToolError` naming every problem on one line."""

    def __init__(self, tool: str, schema: dict[str, Any]) -> None:
        """`schema` is the tool's `inputSchema` as its server sent it."""
        self.tool = tool
        self.schema = schema
        self._validator: Any = _validator_for(schema)

    def check(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """`arguments` coerced where lenient and checked against the schema."""
        value = _coerce(self.schema, arguments)
        assert isinstance(value, dict)
        if self._validator is None:
            return value
        problems = _problems(self._validator.iter_errors(value))
        if problems:
            raise ToolError(f"invalid arguments for {self.tool}: {'; '.join(problems)}")
        return value


def _validator_for(schema: dict[str, Any]) -> Any:
    """A validator for `schema` (its own `$schema` draft, else 2020-12, the MCP default), or
    None when the schema is broken. `jsonschema` is imported here, when a server's first tool
    is listed: a session without MCP servers never loads it (docs/adr/0042)."""
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import SchemaError

    cls = validators.validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError:
        return None
    return cls(schema)


def _coerce(schema: Any, value: Any) -> Any:
    """`value` with the tools' leniency applied along `properties` and `items`."""
    if not isinstance(schema, dict):
        return value
    expected = schema.get("type")
    if isinstance(expected, str):
        value = lenient_value(expected, value)
    if isinstance(value, dict):
        properties = schema.get("properties")
        coerced: dict[str, Any] = {}
        for name, item in value.items():
            inner = properties.get(name) if isinstance(properties, dict) else None
            if item is None and not _allows_null(inner):
                continue  # "not given" (a required argument is then missing)
            coerced[name] = _coerce(inner, item)
        return coerced
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_coerce(schema["items"], item) for item in value]
    return value


def _allows_null(schema: Any) -> bool:
    """Whether `schema` (a property's) says null is a value of its own."""
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    choices = [*(schema.get("anyOf") or ()), *(schema.get("oneOf") or ())]
    return any(_allows_null(choice) for choice in choices)


def _problems(errors: Any) -> list[str]:
    problems: list[str] = []
    for error in sorted(errors, key=lambda e: (list(e.absolute_path), e.validator)):
        for problem in _describe(error):
            if problem not in problems:
                problems.append(problem[:MAX_PROBLEM])
    return problems


def _describe(error: ValidationError) -> list[str]:
    where = argument_path(error.absolute_path)
    label = f"argument '{where}'" if where else "arguments"
    prefix = f"{where}." if where else ""
    kind = error.validator
    expected: Any = error.validator_value
    instance = error.instance
    if kind == "required" and isinstance(instance, dict):
        return [
            f"missing required argument '{prefix}{name}'"
            for name in expected
            if name not in instance
        ]
    if kind == "additionalProperties" and isinstance(instance, dict):
        known = error.schema.get("properties") or {} if isinstance(error.schema, dict) else {}
        return [f"unknown argument '{prefix}{name}'" for name in instance if name not in known]
    if kind == "type":
        wanted = " or ".join(_article(name) for name in _as_list(expected))
        return [f"{label} must be {wanted}, got {json_type_name(instance)}"]
    if kind == "enum":
        choices = ", ".join(repr(choice) for choice in _as_list(expected))
        return [f"{label} must be one of {choices}, got {instance!r}"]
    bound = _BOUNDS.get(str(kind))
    if bound is not None:
        return [f"{label} must be {bound(expected)}, got {instance!r}"]
    return [f"{label}: {error.message.splitlines()[0]}"]


_BOUNDS: dict[str, Callable[[Any], str]] = {
    "minimum": lambda limit: f"at least {limit}",
    "exclusiveMinimum": lambda limit: f"more than {limit}",
    "maximum": lambda limit: f"at most {limit}",
    "exclusiveMaximum": lambda limit: f"less than {limit}",
    "minLength": lambda limit: f"at least {limit} characters long",
    "maxLength": lambda limit: f"at most {limit} characters long",
    "minItems": lambda limit: f"at least {limit} items long",
    "maxItems": lambda limit: f"at most {limit} items long",
}


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _article(type_name: Any) -> str:
    name = str(type_name)
    return f"an {name}" if name[:1] in "aeiou" else f"a {name}"
