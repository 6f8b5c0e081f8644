"""Which keys the settings models know, and a "did you mean" for the ones they do not.

Unknown keys are kept in the file (a newer Forge, or a plugin, may use them) but are reported
as warnings, since most are typos: `context.max_token: 8000` silently keeps the default budget.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel

SIMILARITY_CUTOFF = 0.6
"""difflib ratio a known name needs to be suggested for an unknown one."""


def _section_model(model: type[BaseModel], name: str) -> type[BaseModel] | None:
    """The settings model of field `name` when it is itself a section, else None."""
    field = model.model_fields.get(name)
    if field is None:
        return None
    annotation = field.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def known_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every dotted key `model` accepts, sections and leaves (`context`, `context.max_tokens`)."""
    keys: list[str] = []
    for name in model.model_fields:
        key = f"{prefix}{name}"
        keys.append(key)
        section = _section_model(model, name)
        if section is not None:
            keys.extend(known_keys(section, f"{key}."))
    return keys


def unknown_keys(
    model: type[BaseModel], data: Mapping[str, Any]
) -> Iterator[tuple[tuple[str, ...], str | None]]:
    """Each key path in `data` that the top-level `model` does not know, with a suggestion.

    The suggestion (a dotted key, or None) is a close sibling (`context.max_tokens` for
    `context.max_token`), else a known key elsewhere with a close last part
    (`context.max_tokens` for a top-level `max_tokens`). Values under an unknown key are not
    looked into.
    """
    yield from _unknown_in(model, model, data, ())


def _unknown_in(
    top: type[BaseModel], model: type[BaseModel], data: Mapping[str, Any], prefix: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], str | None]]:
    for name, value in data.items():
        path = (*prefix, str(name))
        if not isinstance(name, str) or name not in model.model_fields:
            yield path, suggest(top, model, path)
            continue
        section = _section_model(model, name)
        if section is not None and isinstance(value, Mapping):
            yield from _unknown_in(top, section, value, path)


def suggest(top: type[BaseModel], section: type[BaseModel], path: tuple[str, ...]) -> str | None:
    """The known dotted key the unknown `path` (inside `section`) most likely meant, or None."""
    name = path[-1]
    parent = ".".join(path[:-1])
    close = difflib.get_close_matches(
        name, list(section.model_fields), n=1, cutoff=SIMILARITY_CUTOFF
    )
    if close:
        return f"{parent}.{close[0]}" if parent else close[0]
    by_last_part: dict[str, str] = {}
    for key in known_keys(top):
        by_last_part.setdefault(key.rsplit(".", 1)[-1], key)
    close = difflib.get_close_matches(name, list(by_last_part), n=1, cutoff=SIMILARITY_CUTOFF)
    return by_last_part[close[0]] if close else None
