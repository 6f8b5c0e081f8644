"""An MCP tool result as the text the model reads: text joined and bounded, anything else
described in one line (never base64 in the context), Forge's known secrets masked as in a
command's output (a server that echoes its environment must not hand the model the key)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from forge.agent.tools.output import HeadTailBuffer
from forge.config.secrets import redact
from forge.unicode_repair import repaired

if TYPE_CHECKING:
    import mcp.types as types  # the SDK loads when a server connects (docs/adr/0042)

HEAD_CHARACTERS = 10_000
TAIL_CHARACTERS = 10_000
"""The most of an MCP result the model reads (the same bounds as `execute_command`)."""


def result_text(result: types.CallToolResult) -> str:
    """The content blocks as text: text as is, images, audio and resources in one line each;
    the structured content when there is no other content."""
    parts = [_block_text(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    buffer = HeadTailBuffer(HEAD_CHARACTERS, TAIL_CHARACTERS)
    text = repaired("\n".join(parts), "an MCP server") if parts else "(no content)"
    buffer.add(redact(text))
    return buffer.render()


def _block_text(block: object) -> str:
    import mcp.types as types  # loaded by the connection that returned `block`

    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent):
        return f"[image: {block.mime_type}, {_decoded_size(block.data)} bytes, not shown]"
    if isinstance(block, types.AudioContent):
        return f"[audio: {block.mime_type}, {_decoded_size(block.data)} bytes, not shown]"
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return resource.text
        mime = resource.mime_type or "binary"
        return f"[resource {resource.uri}: {mime}, {_decoded_size(resource.blob)} bytes, not shown]"
    if isinstance(block, types.ResourceLink):
        return f"[resource link: {block.uri}{f' ({block.name})' if block.name else ''}]"
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind} content, not shown]"


def _decoded_size(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=")
