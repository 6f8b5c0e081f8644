"""The Chat Completions wire format: request bodies out, usage and whole replies in.

Servers that call themselves OpenAI-compatible disagree in small ways (where reasoning lives,
whether ids are present, which usage details exist); the readers here accept all the shapes
seen in the corpus and fall back to empty values rather than failing on a missing field.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from forge.llm.errors import MalformedStreamError
from forge.llm.messages import Message, ToolCall, image_content
from forge.llm.protocols import ToolSpec
from forge.llm.stream import Completion, Usage
from forge.llm.usage_bounds import checked_cached, checked_count


def request_body(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] | None,
    *,
    max_tokens: int | None,
    stream: bool,
    include_usage: bool,
    tool_choice: str | dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body of one `/chat/completions` request. `tool_choice` is sent only with
    tools (llama-cpp-python emits tool calls only when it is sent)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": chat_messages(messages),
        "stream": stream,
    }
    if tools:
        body["tools"] = [tool.to_api() for tool in tools]
        if tool_choice:
            body["tool_choice"] = tool_choice
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if stream and include_usage:
        body["stream_options"] = {"include_usage": True}
    return body


TOOL_IMAGES_NOTE = (
    "[Images returned by the tool calls above (tool-provided, not written by the user)]"
)
"""The text heading the user-role message that carries tools' images on Chat Completions."""


def chat_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The messages in Chat Completions shape. A `tool` message cannot carry an image, so
    the images of a run of tool results follow it in one user-role message headed by
    `TOOL_IMAGES_NOTE`, each named by its tool and call (docs/adr/0055, part 2)."""
    out: list[dict[str, Any]] = []
    pending: list[Message] = []
    for message in messages:
        if pending and message.role != "tool":
            out.append(tool_images_message(pending))
            pending = []
        out.append(message.to_api())
        if message.role == "tool" and message.images:
            pending.append(message)
    if pending:
        out.append(tool_images_message(pending))
    return out


def tool_images_message(results: Sequence[Message]) -> dict[str, Any]:
    """The user-role message carrying the images of `results` (tool messages)."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": TOOL_IMAGES_NOTE}]
    for result in results:
        label = f"{result.name or 'tool'} ({result.tool_call_id or '?'})"
        for image in result.images:
            parts.append({"type": "text", "text": f"{label}: {image.name}"})
            parts.extend(image_content("", (image,)))
    return {"role": "user", "content": parts}


def json_error_text(error: json.JSONDecodeError) -> str:
    """A JSON error's reason and position, read as one phrase. Some reasons already end in
    "at" ("Invalid control character at"), which a plain "{msg} at {pos}" would double."""
    reason = error.msg.removesuffix(" at")
    return f"{reason} at {error.pos}"


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def parse_usage(raw: Any) -> Usage | None:
    """A `Usage` from a usage object, or None when there is none or it cannot be trusted.

    A usage with no prompt tokens is not trusted: no real prompt is empty, and LitServe
    reports all zeros (it keeps only the last chunk's usage). Reporting none keeps Forge on
    its own count instead of a gauge that falls to nothing (docs/adr/0019). Every count must
    be an integer in 0…10⁹ and cached tokens at most the prompt's; one that is not is
    ignored with a log line (`forge.llm.usage_bounds`, docs/adr/0036).
    """
    if not isinstance(raw, dict):
        return None
    prompt = checked_count(raw.get("prompt_tokens"), "prompt_tokens") or 0
    if prompt <= 0:
        return None
    completion = checked_count(raw.get("completion_tokens"), "completion_tokens")
    if completion is None and raw.get("completion_tokens") is not None:
        return None  # failed validation: Forge estimates the request instead (issue 34)
    completion = completion or 0
    total = checked_count(raw.get("total_tokens"), "total_tokens") or prompt + completion
    prompt_details = raw.get("prompt_tokens_details")
    completion_details = raw.get("completion_tokens_details")
    cached = (
        checked_count(prompt_details.get("cached_tokens"), "cached_tokens")
        if isinstance(prompt_details, dict)
        else None
    )
    # DeepSeek reports cache hits at the top level instead of in prompt_tokens_details.
    cached = cached or checked_count(raw.get("prompt_cache_hit_tokens"), "prompt_cache_hit_tokens")
    cached = checked_cached(cached or 0, prompt)
    reasoning = (
        checked_count(completion_details.get("reasoning_tokens"), "reasoning_tokens")
        if isinstance(completion_details, dict)
        else None
    )
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total,
        cached_tokens=cached,
        reasoning_tokens=reasoning or 0,
    )


def _parts(value: Any) -> list[dict[str, Any]]:
    return [part for part in value if isinstance(part, dict)] if isinstance(value, list) else []


def text_of(value: Any) -> str:
    """Content as text: a string, or the text parts of a content-part list."""
    if isinstance(value, str):
        return value
    return "".join(
        part["text"]
        for part in _parts(value)
        if part.get("type", "text") == "text" and isinstance(part.get("text"), str)
    )


def _thinking_parts_text(content: Any) -> str:
    """Mistral's Magistral streams reasoning as content parts of type "thinking", each
    holding its own list of text parts."""
    return "".join(
        text_of(part.get("thinking")) for part in _parts(content) if part.get("type") == "thinking"
    )


_REASONING_KEYS = frozenset({"reasoning_content", "reasoning", "reasoning_details"})


def reasoning_of(fields: dict[str, Any]) -> str:
    """Reasoning text from a delta or message: `reasoning_content`, `reasoning`, "thinking"
    content parts, or the text inside `reasoning_details` (used only when no plain field is
    present, because OpenRouter sends the same text in both `reasoning` and
    `reasoning_details`). Encrypted reasoning has no text and yields nothing."""
    if fields.keys().isdisjoint(_REASONING_KEYS) and not isinstance(fields.get("content"), list):
        return ""  # the common delta (text or a tool-call piece): one set test per chunk
    for key in ("reasoning_content", "reasoning"):
        value = fields.get(key)
        if isinstance(value, str) and value:
            return value
    thinking = _thinking_parts_text(fields.get("content"))
    if thinking:
        return thinking
    pieces = []
    for detail in _parts(fields.get("reasoning_details")):
        for key in ("text", "summary"):
            value = detail.get(key)
            if isinstance(value, str):
                pieces.append(value)
                break
    return "".join(pieces)


def visible_text_of(fields: dict[str, Any]) -> str:
    """The answer text of a delta or message. A refusal is shown as the answer, because to a
    person at a terminal it is one."""
    content = fields.get("content")
    if isinstance(content, str) and content:
        return content
    return text_of(content) or text_of(fields.get("refusal"))


def new_tool_call_id() -> str:
    """An id for a tool call the server sent without one (some local servers do)."""
    return f"call_{uuid.uuid4().hex[:24]}"


def normalized_arguments(arguments: str) -> str:
    """Arguments text to keep: a call with no arguments at all means an empty object."""
    return arguments if arguments.strip() else "{}"


def completion_from_body(body: Any, requested_model: str) -> Completion:
    """The `Completion` in a non-streaming response body (choice 0)."""
    if not isinstance(body, dict):
        raise MalformedStreamError("The server's reply is not a JSON object")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedStreamError("The server's reply has no choices")
    first = min(
        (choice for choice in choices if isinstance(choice, dict)),
        key=lambda choice: _count(choice.get("index")),
    )
    message = first.get("message")
    if not isinstance(message, dict):
        raise MalformedStreamError("The server's reply has no message")
    calls = []
    for raw_call in message.get("tool_calls") or ():
        if not isinstance(raw_call, dict):
            continue
        function = raw_call.get("function")
        function = function if isinstance(function, dict) else {}
        arguments = function.get("arguments")
        calls.append(
            ToolCall(
                id=_text(raw_call.get("id")) or new_tool_call_id(),
                name=_text(function.get("name")),
                arguments=normalized_arguments(arguments if isinstance(arguments, str) else ""),
            )
        )
    finish_reason = first.get("finish_reason")
    return Completion(
        message=Message(
            role="assistant",
            content=visible_text_of(message),
            tool_calls=tuple(calls),
            reasoning=reasoning_of(message),
        ),
        usage=parse_usage(body.get("usage")),
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        model=_text(body.get("model")) or requested_model,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
