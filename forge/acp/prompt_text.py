"""An ACP prompt (content blocks) as the text of one Forge message.

Text blocks are the message. A link to a file in the workspace becomes an `@path` mention,
so Forge attaches the file as it does for a typed one (docs/adr/0030); a link elsewhere is
named by its URI. An embedded text resource (an editor's selection or unsaved buffer) is
included with its URI. Images go with the message as images (`prompt_images`); audio is not
accepted (the initialize response says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)


def prompt_text(blocks: Sequence[object], workspace: Path) -> str:
    """The message the blocks make (see the module docstring)."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(_mention(block.uri, workspace))
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(
            block.resource, TextResourceContents
        ):
            parts.append(f"\n[{block.resource.uri}]\n{block.resource.text}\n")
    return " ".join(part for part in parts if part).strip()


def _mention(uri: str, workspace: Path) -> str:
    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file"):
        return uri
    path = Path(unquote(parsed.path))
    try:
        relative = path.resolve().relative_to(workspace)
    except ValueError:
        return uri
    return f"@{relative.as_posix()}"
