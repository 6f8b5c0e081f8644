"""Dotted keys (`context.summarizer.chunk_size`) over nested mappings and settings models."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from pydantic import BaseModel, SecretStr


def dotted_keys(data: Mapping[str, Any], prefix: str = "") -> set[str]:
    """Every leaf key in a nested mapping; lists and scalars are leaves."""
    keys: set[str] = set()
    for name, value in data.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping) and value:
            keys |= dotted_keys(value, f"{key}.")
        else:
            keys.add(key)
    return keys


def leaf_values(model: BaseModel, prefix: str = "") -> dict[str, Any]:
    """Every leaf setting of `model` by dotted key, secrets revealed, in declaration order."""
    values: dict[str, Any] = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        key = f"{prefix}{name}"
        if isinstance(value, BaseModel):
            values.update(leaf_values(value, f"{key}."))
        elif isinstance(value, SecretStr):
            values[key] = value.get_secret_value()
        elif isinstance(value, list):
            # A list of sections (`hooks.PreToolUse`) is one leaf, written as the plain data
            # the user wrote (what was set, so a save leaves the entries as they were).
            values[key] = [
                item.model_dump(exclude_unset=True) if isinstance(item, BaseModel) else item
                for item in value
            ]
        elif isinstance(value, dict):
            # A map of sections (`mcp_servers`) is one leaf, written as plain data.
            values[key] = {
                item_key: item.model_dump(exclude_defaults=True)
                if isinstance(item, BaseModel)
                else item
                for item_key, item in value.items()
            }
        else:
            values[key] = value
    return values


def has_key(data: Mapping[str, Any], key: str) -> bool:
    """Whether the dotted `key` is present in `data`."""
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def set_key(data: MutableMapping[str, Any], key: str, value: Any) -> None:
    """Set the dotted `key`, creating (or replacing non-mapping) parents as needed."""
    *parents, leaf = key.split(".")
    node = data
    for part in parents:
        child = node.get(part)
        if not isinstance(child, MutableMapping):
            child = {}
            node[part] = child
        node = child
    node[leaf] = value


def delete_key(data: MutableMapping[str, Any], key: str) -> None:
    """Remove the dotted `key` if present, then any parent it leaves empty."""
    parts = key.split(".")
    trail: list[tuple[MutableMapping[str, Any], str]] = []
    node: Any = data
    for part in parts:
        if not isinstance(node, MutableMapping) or part not in node:
            return
        trail.append((node, part))
        node = node[part]
    parent, leaf = trail.pop()
    del parent[leaf]
    while trail and not parent:
        parent, name = trail.pop()
        del parent[name]


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `over` laid on top: mappings merge key by key, anything else is replaced."""
    merged: dict[str, Any] = dict(base)
    for name, value in over.items():
        below = merged.get(name)
        if isinstance(value, Mapping) and isinstance(below, Mapping):
            merged[name] = deep_merge(below, value)
        else:
            merged[name] = value
    return merged
