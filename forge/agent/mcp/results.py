"""An MCP tool result as the text the model reads: text joined and bounded, anything else
described in one line (never base64 in the context), Forge's known secrets masked as in a
command's output (a server that echoes its environment must not hand the model the key).
Image blocks also come back as images (`result_images`), which go to the model with the text
(docs/adr/0055, part 2)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Collection
from typing import TYPE_CHECKING

from forge.agent.tools.output import HeadTailBuffer
from forge.config.secrets import redact
from forge.llm.image_parts import ImagePart, read_image
from forge.unicode_repair import repaired

if TYPE_CHECKING:
    import mcp.types as types  # the SDK loads when a server connects (docs/adr/0042)

HEAD_CHARACTERS = 10_000
TAIL_CHARACTERS = 10_000
"""The most of an MCP result the model reads (the same bounds as `execute_command`)."""


def result_text(result: types.CallToolResult, attached: Collection[int] = ()) -> str:
    """The content blocks as text: text as is, images, audio and resources in one line each
    (an image whose index is in `attached` is said to be attached); the structured content
    when there is no other content."""
    parts = [
        _attached_image_text(block) if index in attached else _block_text(block)
        for index, block in enumerate(result.content)
    ]
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


def result_images(result: types.CallToolResult, label: str) -> dict[int, ImagePart]:
    """The result's readable image blocks by index, each called "`label` image N" (an
    unreadable one stays a line of text). Blocking: decodes and scales them."""
    import mcp.types as types  # loaded by the connection that returned `result`

    images: dict[int, ImagePart] = {}
    for index, block in enumerate(result.content):
        if not isinstance(block, types.ImageContent):
            continue
        try:
            data = base64.b64decode(block.data, validate=True)
            images[index] = read_image(data, f"{label} image {len(images) + 1}")
        except (binascii.Error, ValueError):  # ImageError is a ValueError
            continue
    return images


def _attached_image_text(block: object) -> str:
    mime = getattr(block, "mime_type", "image")
    return f"[image: {mime}, {_decoded_size(getattr(block, 'data', ''))} bytes, attached]"


def _decoded_size(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=")
