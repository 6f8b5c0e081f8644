"""Messages in the OpenAI Chat Completions shape, plus the metadata Forge keeps about them.

A `Message` is immutable. Any change (a summary replacing it, a partial answer being marked)
creates a new object, so a token count cached per object stays true for that object's life.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

from forge.llm.image_parts import ImagePart, masked_image_text
from forge.unicode_repair import may_hold_surrogates, repaired_value

Role = Literal["system", "user", "assistant", "tool"]


def new_message_id() -> str:
    """A short random id for a message (unique within any realistic session)."""
    return uuid.uuid4().hex[:16]


class MessageKind(StrEnum):
    """What a message is to Forge, beyond its role."""

    NORMAL = "normal"
    SUMMARY = "summary"
    """Replaces one or more earlier messages with an LLM-written summary."""
    GOAL_BATCH = "goal_batch"
    """Replaces several complete user turns with one message keeping their intent."""
    PRUNED = "pruned"
    """Marks where deterministic fallback pruning removed or shortened messages."""
    OBSERVATION = "observation"
    """A user-role message that carries a tool's or a command's output, not an instruction
    (shell output the user adds to the conversation; text-action agents' observations)."""
    PLAN = "plan"
    """The model's current checklist (from `update_plan`), pinned once right after the latest
    user message; no strategy summarizes, masks or prunes it (docs/adr/0028)."""
    LEDGER = "ledger"
    """The work ledger (what the session did, from its tool calls), pinned once right after
    the head; rewritten only when a compaction runs, never summarized (docs/adr/0050)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call the assistant asked for."""

    id: str
    name: str
    arguments: str = "{}"
    """The arguments as the raw JSON text the model produced (may be invalid JSON)."""

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; raises ValueError with a readable reason if they are not.
        Raw control characters inside strings are accepted (`json.loads(strict=False)`)."""
        text = self.arguments.strip() or "{}"
        try:
            # strict=False: raw control characters inside strings (what grammar-constrained
            # local servers produce) are accepted; anything that is not JSON still fails.
            value = json.loads(text, strict=False)
        except json.JSONDecodeError as error:
            reason = error.msg.removesuffix(" at")  # "Invalid control character at" would double
            raise ValueError(f"arguments are not valid JSON: {reason} at {error.pos}") from None
        if not isinstance(value, dict):
            raise ValueError("arguments must be a JSON object")
        if may_hold_surrogates(text):  # `"\ud800"` is valid JSON, not valid text
            value = repaired_value(value, "the model's tool call")
        return value

    def to_api(self) -> dict[str, Any]:
        """The call in Chat Completions wire shape."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class Message:
    """One chat message with Forge metadata. Identity equality: two objects are two messages."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    """For role "tool": the id of the call this answers."""
    name: str | None = None
    """For role "tool": the name of the tool that produced it."""
    reasoning: str = ""
    """Reasoning text the model streamed; shown, kept, never sent back as text (Anthropic's
    signed thinking blocks go back from `meta`, docs/adr/0037)."""
    id: str = field(default_factory=new_message_id)
    created_at: float = field(default_factory=time.time)
    kind: MessageKind = MessageKind.NORMAL
    replaces: tuple[str, ...] = ()
    """For summaries, goal batches and pruned markers: ids of the messages this replaced."""
    meta: dict[str, Any] = field(default_factory=dict)
    """Free-form metadata (e.g. partial=True, strategy, tokens_before). JSON-serializable."""
    images: tuple[ImagePart, ...] = ()
    """Images sent with the text: the user's attachments, or what a tool returned (placed by
    the wire formats; docs/adr/0055 part 2). A message that replaces this one (a placeholder,
    a summary) does not keep them unless it says so."""

    def to_api(self) -> dict[str, Any]:
        """The message in Chat Completions wire shape (metadata stripped).

        `content` is always a string: an assistant message holding only tool calls is sent
        with `""`, never `null`, because llama-cpp-python's server answers HTTP 500 to `null`
        (and to a missing key) while every server accepts `""` (docs/adr/0019).
        """
        payload: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.images and self.role in ("user", "system"):
            # A tool message cannot carry an image: the wire format sends a tool's images in
            # a user-role message after the results (`forge.llm.wire_format`).
            payload["content"] = image_content(self.content, self.images)
        if self.role == "assistant" and self.tool_calls:
            payload["tool_calls"] = [call.to_api() for call in self.tool_calls]
        if self.role == "tool":
            payload["tool_call_id"] = self.tool_call_id
        return payload

    def evolve(self, **changes: Any) -> Message:
        """A copy with changes applied; keeps the id so the session log can relate them."""
        return replace(self, **changes)

    def to_record(self) -> dict[str, Any]:
        """A JSON-serializable record of everything (for session files)."""
        return {
            "id": self.id,
            "role": self.role,
            "content": self.content,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ],
            "tool_call_id": self.tool_call_id,
            "name": self.name,
            "reasoning": self.reasoning,
            "created_at": self.created_at,
            "kind": self.kind.value,
            "replaces": list(self.replaces),
            "meta": self.meta,
        } | ({"images": [image.to_record() for image in self.images]} if self.images else {})

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Message:
        """Rebuild a message written by `to_record`."""
        return cls(
            role=record["role"],
            content=record.get("content") or "",
            tool_calls=tuple(
                ToolCall(id=c["id"], name=c["name"], arguments=c.get("arguments") or "{}")
                for c in record.get("tool_calls") or ()
            ),
            tool_call_id=record.get("tool_call_id"),
            name=record.get("name"),
            reasoning=record.get("reasoning") or "",
            id=record.get("id") or new_message_id(),
            created_at=float(record.get("created_at") or time.time()),
            kind=MessageKind(record.get("kind") or "normal"),
            replaces=tuple(record.get("replaces") or ()),
            meta=dict(record.get("meta") or {}),
            images=tuple(
                ImagePart.from_record(item)
                for item in record.get("images") or ()
                if isinstance(item, dict) and item.get("sha256")
            ),
        )


def image_content(text: str, images: tuple[ImagePart, ...]) -> list[dict[str, Any]]:
    """Chat Completions content parts: the text, then each image as an `image_url` data URL
    (an image whose bytes are missing is named in a text part instead)."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for image in images:
        if image.masked:
            parts.append({"type": "text", "text": masked_image_text(image)})
        elif image.loaded:
            url = f"data:{image.media_type};base64,{base64.b64encode(image.data).decode('ascii')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:
            parts.append({"type": "text", "text": missing_image_text(image)})
    return parts


def missing_image_text(image: ImagePart) -> str:
    """What is sent for an image whose bytes the session's files no longer hold."""
    return f"[image {image.name}: its data is missing from the session's files]"


def system(content: str) -> Message:
    """A system message."""
    return Message(role="system", content=content)


def user(content: str) -> Message:
    """A user message."""
    return Message(role="user", content=content)


def assistant(content: str = "", tool_calls: tuple[ToolCall, ...] = ()) -> Message:
    """An assistant message, optionally with tool calls."""
    return Message(role="assistant", content=content, tool_calls=tool_calls)


def tool_result(call: ToolCall, content: str) -> Message:
    """The result of a tool call."""
    return Message(role="tool", content=content, tool_call_id=call.id, name=call.name)
