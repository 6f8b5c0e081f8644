"""MCP tool catalogs for `tests/mcp/servers/catalog_server.py`, and what the tests read off
a request's raw bytes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from forge.config.settings import McpServerSettings

CATALOG_SERVER = Path(__file__).resolve().parent / "servers" / "catalog_server.py"

VERBS = ("create", "get", "list", "update", "delete", "search")
NOUNS = (
    "issue",
    "pull_request",
    "branch",
    "commit",
    "file",
    "repository",
    "release",
    "label",
    "milestone",
    "comment",
    "workflow",
    "gist",
    "team",
    "project",
    "tag",
    "webhook",
    "secret",
    "deployment",
    "discussion",
    "notification",
)


def forge_catalog(name: str = "forgehub") -> dict[str, Any]:
    """120 tools (6 verbs by 20 nouns) shaped like a code host's: `create_issue`,
    `list_commit`, … each with an owner/repo schema and a few fields of its own."""
    tools = []
    for noun in NOUNS:
        for verb in VERBS:
            words = noun.replace("_", " ")
            properties: dict[str, Any] = {
                "owner": {"type": "string", "description": "Repository owner"},
                "repo": {"type": "string", "description": "Repository name"},
            }
            if verb in ("get", "update", "delete"):
                properties[f"{noun}_id"] = {"type": "integer", "description": f"The {words} id"}
            if verb in ("create", "update"):
                properties["title"] = {"type": "string", "description": f"The {words} title"}
                properties["body"] = {"type": "string", "description": f"The {words} body"}
            if verb in ("list", "search"):
                properties["page"] = {"type": "integer", "description": "Page number"}
                properties["per_page"] = {"type": "integer", "description": "Results per page"}
            if verb == "search":
                properties["query"] = {"type": "string", "description": "Search words"}
            tools.append(
                {
                    "name": f"{verb}_{noun}",
                    "description": f"{verb.capitalize()} a {words} in a repository",
                    "inputSchema": {
                        "type": "object",
                        "properties": properties,
                        "required": ["owner", "repo"],
                    },
                }
            )
    return {"name": name, "instructions": "Issues, pull requests and code", "tools": tools}


def catalog_server(path: Path, catalog: dict[str, Any]) -> McpServerSettings:
    """A stdio entry running the catalog server on `catalog` (written to `path`)."""
    path.write_text(json.dumps(catalog), encoding="utf-8")
    return McpServerSettings(command=sys.executable, args=[str(CATALOG_SERVER), str(path)])


def raw_fields(raw: bytes) -> dict[str, str]:
    """Each top-level field of a JSON request body as the exact text that was sent."""
    text = raw.decode("utf-8")
    decoder = json.JSONDecoder()
    fields: dict[str, str] = {}
    position = text.index("{") + 1
    while True:
        position = _skip(text, position, " \n\r\t,")
        if text[position] == "}":
            return fields
        key, position = decoder.raw_decode(text, position)
        position = _skip(text, position, " \n\r\t:")
        _, end = decoder.raw_decode(text, position)
        fields[key] = text[position:end]
        position = end


def _skip(text: str, position: int, characters: str) -> int:
    while text[position] in characters:
        position += 1
    return position


def extends(earlier: str, later: str) -> bool:
    """Whether the JSON array `later` is `earlier` with items appended: `earlier`'s bytes
    up to its closing bracket begin `later` (or the two are the same)."""
    if earlier == later:
        return True
    opened = earlier[:-1].rstrip()
    return earlier.endswith("]") and later.startswith(opened) and len(later) > len(earlier)
