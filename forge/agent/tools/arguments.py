"""A tool's arguments as a pydantic model: its JSON schema for the model, and its checking.

Each built-in tool declares a `ToolArguments` model (`ReadFileArgs`, ...). `tool_schema` turns
it into the JSON schema sent to the model, in the compact shape the tools always had (no
titles, no defaults, no `$defs`, an optional field as its plain type); `parse_arguments`
validates a call's arguments with pydantic and reports every problem as one readable line per
argument, never pydantic's own multi-line text. See docs/adr/0040-tool-arguments-as-models.md.

Models make small mistakes, so the checking is lenient where a retry would be wasted: a null
for an optional argument means "not given"; an integer or number sent as a numeric string, an
integral float where an integer is expected, and a boolean sent as "true"/"false" are taken as
meant (`Integer`, `Number`, `Boolean`). Anything else has to have the right JSON type (the
models are strict). Unknown arguments are ignored when the call is otherwise valid, and named
beside the other problems when it is not (a misspelt argument is the usual cause).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated, Any, ClassVar, TypeVar, cast

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, model_validator
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import ErrorDetails, core_schema

from forge.agent.tools.base import Tool, ToolError


def _lenient_int(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _lenient_float(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return value
    return value


def _lenient_bool(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return value


def lenient_value(json_type: str, value: Any) -> Any:
    """`value` coerced as the tools' leniency allows where a JSON schema wants `json_type`
    ("integer", "number" or "boolean"; any other type leaves it as it is)."""
    coerce = {"integer": _lenient_int, "number": _lenient_float, "boolean": _lenient_bool}
    return coerce[json_type](value) if json_type in coerce else value


Integer = Annotated[int, BeforeValidator(_lenient_int)]
"""An integer; a numeric string ("12") or an integral float (12.0) is taken as one."""
Number = Annotated[float, BeforeValidator(_lenient_float)]
"""A number; a numeric string ("1.5") is taken as one."""
Boolean = Annotated[bool, BeforeValidator(_lenient_bool)]
"""A boolean; the strings "true" and "false" (any case) are taken as one."""


def _without_docstring(schema: dict[str, Any]) -> None:
    """A model's docstring documents the code, not the call: the model reads the tool's
    description and the fields' ones."""
    schema.pop("description", None)


class ToolArguments(BaseModel):
    """The base of every tool's arguments model: strict JSON types, frozen, extras ignored, and
    a null for an argument meaning it was not given (a required one is then missing)."""

    model_config = ConfigDict(
        strict=True, frozen=True, extra="ignore", json_schema_extra=_without_docstring
    )

    @model_validator(mode="before")
    @classmethod
    def _null_means_absent(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data


ArgsT = TypeVar("ArgsT", bound=ToolArguments)


class ModelTool(Tool[ArgsT]):
    """A tool whose arguments are the pydantic model `arguments_model` (the `ArgsT` of its
    `run`); its `spec.parameters` is `tool_schema(arguments_model)`."""

    arguments_model: ClassVar[type[ToolArguments]]

    def parse_arguments(self, arguments: dict[str, Any]) -> ArgsT:
        """The arguments as `arguments_model`; `ToolError` names every problem."""
        return cast(ArgsT, validate_arguments(self.arguments_model, self.name, arguments))


def description_first(schema: dict[str, Any]) -> None:
    """A field's `json_schema_extra` that puts its description right after its type (before
    `items`), where a hand-written schema had it; the bytes sent to the model stay the same."""
    description = schema.pop("description", None)
    rest = {key: schema.pop(key) for key in list(schema) if key != "type"}
    if description is not None:
        schema["description"] = description
    schema.update(rest)


class _CompactSchema(GenerateJsonSchema):
    """pydantic's schema generator, made to write schemas as the tools' were hand-written:
    keys in declaration order (not sorted), no titles, no defaults, `X | None` as `X`."""

    def sort(self, value: JsonSchemaValue, parent_key: str | None = None) -> JsonSchemaValue:
        return value

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])


def tool_schema(model: type[ToolArguments]) -> dict[str, Any]:
    """The JSON schema of `model`'s arguments as the model sees it: nested models inlined,
    titles dropped, `type` first, then `properties` and `required`."""
    generated = model.model_json_schema(schema_generator=_CompactSchema)
    definitions = generated.pop("$defs", {})
    return _tidy(generated, definitions)


def _tidy(schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    reference = schema.get("$ref")
    if isinstance(reference, str):  # a nested model, inlined (with the field's own keys)
        siblings = {key: value for key, value in schema.items() if key != "$ref"}
        return _tidy({**definitions[reference.rsplit("/", 1)[-1]], **siblings}, definitions)
    tidy: dict[str, Any] = {}
    if "type" in schema:
        tidy["type"] = schema["type"]
    for key, value in schema.items():
        if key in ("title", "type", "additionalProperties"):
            continue
        if key == "properties":
            tidy[key] = {name: _tidy(item, definitions) for name, item in value.items()}
        elif key == "items" and isinstance(value, dict):
            tidy[key] = _tidy(value, definitions)
        else:
            tidy[key] = value
    if "required" in tidy:  # after the properties, as written by hand
        tidy["required"] = tidy.pop("required")
    return tidy


def validate_arguments(model: type[ArgsT], tool: str, arguments: dict[str, Any]) -> ArgsT:
    """`arguments` validated (and leniently coerced) into `model`.

    Raises `ToolError` naming every problem on one line, e.g. "invalid arguments for
    read_file: missing required argument 'path'".
    """
    try:
        return model.model_validate(arguments)
    except ValidationError as error:
        problems = argument_problems(error)
        known = set(model.model_fields)
        problems += [f"unknown argument '{name}'" for name in arguments if name not in known]
        raise ToolError(f"invalid arguments for {tool}: {'; '.join(problems)}") from None


_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "list_type": "an array",
    "tuple_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}

_BOUNDS: dict[str, Callable[[dict[str, Any]], str]] = {
    "greater_than_equal": lambda ctx: f"at least {ctx['ge']}",
    "greater_than": lambda ctx: f"more than {ctx['gt']}",
    "less_than_equal": lambda ctx: f"at most {ctx['le']}",
    "less_than": lambda ctx: f"less than {ctx['lt']}",
    "string_too_short": lambda ctx: f"at least {ctx['min_length']} characters long",
    "string_too_long": lambda ctx: f"at most {ctx['max_length']} characters long",
    "too_short": lambda ctx: f"at least {ctx['min_length']} items long",
    "too_long": lambda ctx: f"at most {ctx['max_length']} items long",
}

_JSON_TYPE_NAMES = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    list: "array",
    dict: "object",
    type(None): "null",
}


def argument_problems(error: ValidationError) -> list[str]:
    """One readable phrase per problem in `error`, naming the argument by its path
    (`blocks[0].replace`), in the words the model reads."""
    return [_problem(detail) for detail in error.errors(include_url=False)]


def _problem(detail: ErrorDetails) -> str:
    where = argument_path(detail["loc"])
    kind = detail["type"]
    given = detail.get("input")
    context: dict[str, Any] = dict(detail.get("ctx") or {})
    label = f"argument '{where}'" if where else "arguments"
    if kind == "missing":
        return f"missing required argument '{where}'"
    if kind in _EXPECTED:
        return f"{label} must be {_EXPECTED[kind]}, got {json_type_name(given)}"
    if kind in ("literal_error", "enum"):
        return f"{label} must be one of {context.get('expected', '?')}, got {given!r}"
    if kind in _BOUNDS:
        return f"{label} must be {_BOUNDS[kind](context)}, got {given!r}"
    message = detail["msg"].splitlines()[0] if detail["msg"] else kind
    return f"{label}: {message}"


def argument_path(location: Iterable[int | str]) -> str:
    """Where in the arguments a problem is, as the model reads it: `blocks[0].replace`."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not text:
            text = str(part)
        else:
            text += f".{part}"
    return text


def json_type_name(value: Any) -> str:
    """The JSON name of `value`'s type ("string", "integer", "null", ...)."""
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
