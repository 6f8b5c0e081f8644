"""Forge's messages and tools in the Anthropic Messages API's shape (docs/adr/0037).

Pure functions, no I/O. Forge keeps the conversation in the Chat Completions shape; this module
turns it into the Messages API's `system`, `messages` and `tools`:

- the first system message becomes `system`; a later system message becomes user text;
- an assistant message becomes its kept thinking blocks (`meta["anthropic_thinking"]`, sent
  back unchanged with their signatures, as the API requires for a tool-use loop), its kept
  server-tool blocks (`meta["anthropic_server_blocks"]`: the API's own tool search and its
  result, whose `tool_reference`s keep the tools they loaded loaded), a text block and one
  `tool_use` block per call;
- a tool marked `defer_loading` is sent with `"defer_loading": true`, and the API's BM25 tool
  search tool goes last in the list (it carries the cache marker; a deferred tool is not
  rendered into the prompt until a search references it);
- a tool message becomes a `tool_result` block (`is_error` when Forge marked the result an
  error) in a user message;
- consecutive messages of the same role are merged into one (the API wants user and assistant
  to alternate), and the list starts with a user message.

The output depends only on the input: the same conversation gives the same bytes, which is what
prompt caching needs (`forge.llm.anthropic_cache` places the breakpoints).
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from forge.llm.image_parts import ImagePart, masked_image_text
from forge.llm.images import ANTHROPIC_MAX_SIDE, prepare_image
from forge.llm.messages import Message, missing_image_text
from forge.llm.protocols import ToolSpec
from forge.unicode_repair import repaired_value

THINKING_META_KEY = "anthropic_thinking"
"""`Message.meta` key holding an assistant message's thinking blocks as the API sent them
(`{"type": "thinking", "thinking", "signature"}` or `{"type": "redacted_thinking", "data"}`)."""

SERVER_BLOCKS_META_KEY = "anthropic_server_blocks"
"""`Message.meta` key holding an assistant message's server-tool blocks as the API sent them
(`server_tool_use` and `tool_search_tool_result`), sent back unchanged."""

SERVER_BLOCK_TYPES = frozenset({"server_tool_use", "tool_search_tool_result"})
"""The server-tool block types kept and sent back."""

TOOL_SEARCH_TOOL: dict[str, Any] = {
    "type": "tool_search_tool_bm25_20251119",
    "name": "tool_search_tool_bm25",
}
"""The Messages API's own tool search (natural-language queries, BM25), sent when a tool is
deferred."""

_MODEL_VERSION = re.compile(r"claude-(opus|sonnet)-(\d+)(?:-(\d{1,2}))?(?:\b|-|$)")


def supports_tool_search(model: str) -> bool:
    """Whether `model` has the Messages API's own tool search (`defer_loading`): Claude Opus
    and Sonnet from 4.5 on (`claude-sonnet-4-5`, `claude-opus-4-5-20251101`, later ones)."""
    found = _MODEL_VERSION.search(model.lower())
    if found is None:
        return False
    major, minor = int(found.group(2)), int(found.group(3) or 0)
    return (major, minor) >= (4, 5)


EMPTY_TEXT = "(empty)"
"""Text sent for a message that has none: the API rejects empty text blocks."""

CONVERSATION_START = "(start of the conversation)"
"""User text put first when the kept history starts with an assistant message."""


@dataclass(frozen=True)
class MessagesRequest:
    """The parts of a Messages API request that carry the prompt, in cache order: tools, then
    system, then messages."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    system: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)


def tool_definition(spec: ToolSpec) -> dict[str, Any]:
    """A tool in the Messages API shape."""
    definition: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.parameters,
    }
    if spec.defer_loading:
        definition["defer_loading"] = True
    return definition


def tool_definitions(tools: Sequence[ToolSpec] | None) -> list[dict[str, Any]]:
    """The request's `tools`: each tool in order, then the API's tool search when one is
    deferred (last, so the cache marker lands on a tool that is always rendered)."""
    definitions = [tool_definition(spec) for spec in tools or ()]
    if any(spec.defer_loading for spec in tools or ()):
        definitions.append(dict(TOOL_SEARCH_TOOL))
    return definitions


def server_blocks(message: Message) -> list[dict[str, Any]]:
    """The server-tool blocks kept on an assistant message (well-formed ones only)."""
    kept = message.meta.get(SERVER_BLOCKS_META_KEY)
    if not isinstance(kept, list):
        return []
    return [
        block
        for block in kept
        if isinstance(block, dict) and block.get("type") in SERVER_BLOCK_TYPES
    ]


def tool_input(arguments: str) -> dict[str, Any]:
    """A tool call's arguments as the object `tool_use.input` must be; text that is not a JSON
    object (a model's broken call, kept in history) is sent as `{"arguments": text}`."""
    try:
        value = repaired_value(json.loads(arguments.strip() or "{}", strict=False))
    except json.JSONDecodeError:
        return {"arguments": arguments}
    return value if isinstance(value, dict) else {"arguments": arguments}


def thinking_blocks(message: Message) -> list[dict[str, Any]]:
    """The thinking blocks kept on an assistant message (well-formed ones only)."""
    kept = message.meta.get(THINKING_META_KEY)
    if not isinstance(kept, list):
        return []
    blocks: list[dict[str, Any]] = []
    for block in kept:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "thinking" and isinstance(block.get("signature"), str):
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": str(block.get("thinking", "")),
                    "signature": block["signature"],
                }
            )
        elif block.get("type") == "redacted_thinking" and isinstance(block.get("data"), str):
            blocks.append({"type": "redacted_thinking", "data": block["data"]})
    return blocks


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text if text.strip() else EMPTY_TEXT}


def _blocks(message: Message, *, with_thinking: bool) -> tuple[str, list[dict[str, Any]]]:
    """The API role and content blocks of one message."""
    if message.role == "tool":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id or "",
            "content": message.content if message.content.strip() else EMPTY_TEXT,
        }
        if message.images:  # a tool's images go inside its result (docs/adr/0055, part 2)
            result["content"] = [_text_block(message.content), *image_blocks(message.images)]
        if message.meta.get("is_error"):
            result["is_error"] = True
        return "user", [result]
    if message.role == "assistant":
        blocks = thinking_blocks(message) if with_thinking else []
        blocks.extend(server_blocks(message))
        if message.content.strip():
            blocks.append({"type": "text", "text": message.content})
        blocks.extend(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": tool_input(call.arguments),
            }
            for call in message.tool_calls
        )
        return "assistant", blocks
    if message.images:
        text = [_text_block(message.content)] if message.content.strip() else []
        return "user", [*text, *image_blocks(message.images)]
    return "user", [_text_block(message.content)]


def image_blocks(images: Sequence[ImagePart]) -> list[dict[str, Any]]:
    """Image blocks (base64), each scaled to the longest side the API takes; an image whose
    bytes are missing is named in a text block instead."""
    blocks: list[dict[str, Any]] = []
    for image in images:
        if image.masked or not image.loaded:
            text = masked_image_text(image) if image.masked else missing_image_text(image)
            blocks.append(_text_block(text))
            continue
        media_type, data = fitted_for_anthropic(image)
        blocks.append(
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": media_type,
                    "data": base64.b64encode(data).decode("ascii"),
                },
            }
        )
    return blocks


@functools.lru_cache(maxsize=32)
def _refitted(sha256: str, data: bytes) -> tuple[str, bytes]:
    prepared = prepare_image(data, "anthropic")
    return prepared.media_type, prepared.data


def fitted_for_anthropic(image: ImagePart) -> tuple[str, bytes]:
    """The media type and bytes to send: as kept when within `ANTHROPIC_MAX_SIDE`, else
    scaled down once per image (cached by hash, so every request sends the same bytes)."""
    if max(image.width, image.height) <= ANTHROPIC_MAX_SIDE:
        return image.media_type, image.data
    return _refitted(image.sha256, image.data)


def to_messages_request(
    messages: Sequence[Message], tools: Sequence[ToolSpec] | None, *, with_thinking: bool = True
) -> MessagesRequest:
    """The Messages API prompt for a Forge conversation (see the module docstring).
    `with_thinking=False` leaves the kept thinking blocks out (a request without thinking)."""
    system: list[dict[str, Any]] = []
    rest = list(messages)
    if rest and rest[0].role == "system":
        system = [_text_block(rest[0].content)]
        rest = rest[1:]
    merged: list[dict[str, Any]] = []
    for message in rest:
        role, blocks = _blocks(message, with_thinking=with_thinking)
        if not blocks:
            continue  # an assistant message with nothing in it is not sent
        if merged and merged[-1]["role"] == role:
            merged[-1]["content"].extend(blocks)
        else:
            merged.append({"role": role, "content": blocks})
    for entry in merged:
        if entry["role"] == "user":
            # The API wants a user message's tool results before its text.
            results = [block for block in entry["content"] if block["type"] == "tool_result"]
            others = [block for block in entry["content"] if block["type"] != "tool_result"]
            entry["content"] = results + others
    if merged and merged[0]["role"] != "user":
        merged.insert(0, {"role": "user", "content": [_text_block(CONVERSATION_START)]})
    return MessagesRequest(tools=tool_definitions(tools), system=system, messages=merged)


def last_turn_lacks_thinking(messages: Sequence[Message]) -> bool:
    """Whether the newest assistant message called tools without a kept thinking block: a
    request with thinking on would then be refused (the API wants the tool-use turn's
    thinking back), so such a request goes without thinking."""
    for message in reversed(messages):
        if message.role == "assistant":
            return bool(message.tool_calls) and not thinking_blocks(message)
        if message.role == "user" and message.kind.value == "normal":
            return False
    return False
