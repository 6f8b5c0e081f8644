"""Rewriting the YAML file while keeping what the user wrote: comments, key order, quoting.

The file's values are read with PyYAML's safe loader (ADR 0002); ruamel.yaml's round-trip
mode is used only to edit the text of a file PyYAML already accepted. Only the values that
changed are replaced, so everything else keeps its exact spelling. ruamel.yaml speaks YAML 1.2
and PyYAML 1.1, so a string PyYAML would read as something else (`yes`, `on`, `12:30`) is
written quoted.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from ruamel.yaml import YAML

# ruamel.yaml is imported when a save needs it: loading (every start-up) never does.

SAVED_FILE_HEADER = (
    "# Forge settings. Every key, with what it does: config.example.yaml or `forge config show`.\n"
    "# Saved by Forge's /settings, which keeps your comments and the order of keys.\n"
)
_STRING_TAG = "tag:yaml.org,2002:str"
_RESOLVER = yaml.resolver.Resolver()


class RoundTripError(ValueError):
    """The file's text could not be edited in place (ruamel.yaml refused it)."""


def _round_trip_yaml() -> YAML:
    from ruamel.yaml import YAML

    handler = YAML(typ="rt", pure=True)
    handler.preserve_quotes = True
    handler.allow_duplicate_keys = True
    handler.width = 4096
    handler.indent(mapping=2, sequence=4, offset=2)
    return handler


def render(current_text: str | None, old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """The file's new text: `current_text` (which parses to `old`) edited to hold `new`.

    A file without any comment (or no file yet) gets `SAVED_FILE_HEADER` on top. Raises
    RoundTripError when ruamel.yaml cannot read `current_text`.
    """
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError as RuamelError

    handler = _round_trip_yaml()
    document: Any = None
    if current_text and current_text.strip():
        try:
            document = handler.load(current_text)
        except RuamelError as error:
            raise RoundTripError(str(error).split("\n", 1)[0]) from None
    prefix = ""
    if document is None and current_text:
        # Only comments (or an empty document): keep them above whatever is added.
        prefix = current_text if current_text.endswith("\n") else current_text + "\n"
    if not isinstance(document, CommentedMap):
        document = CommentedMap()
    _apply(document, old, new)
    stream = io.StringIO()
    if document:
        handler.dump(document, stream)
    text = prefix + stream.getvalue()
    if "#" not in (current_text or ""):
        text = SAVED_FILE_HEADER + text
    return text


def _apply(
    document: MutableMapping[str, Any], old: Mapping[str, Any], new: Mapping[str, Any]
) -> None:
    """Change `document` (which holds `old`) so that it holds `new`, touching only differences."""
    for name, value in new.items():
        before = old.get(name)
        inside = document.get(name)
        if (
            name in old
            and isinstance(value, Mapping)
            and isinstance(before, Mapping)
            and isinstance(inside, MutableMapping)
        ):
            _apply(inside, before, value)
        elif name not in old or before != value or name not in document:
            document[name] = to_yaml(value)
    for name in list(old):
        if name not in new and name in document:
            del document[name]


def to_yaml(value: Any) -> Any:
    """`value` as ruamel.yaml nodes, quoting strings PyYAML would read as another type."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import SingleQuotedScalarString

    if isinstance(value, str):
        if _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) != _STRING_TAG:
            return SingleQuotedScalarString(value)
        return value
    if isinstance(value, Mapping):
        mapping = CommentedMap()
        for name, item in value.items():
            mapping[name] = to_yaml(item)
        return mapping
    if isinstance(value, list | tuple):
        return CommentedSeq(to_yaml(item) for item in value)
    return value
