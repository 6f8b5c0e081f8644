"""How the replay counts a request's tokens and what a prefix cache would save on it.

A request is tokenized with o200k_base (gpt-4o's encoding) as the tool definitions, then each
message, then the reply priming, with the framing tokens Forge's `TiktokenCounter` assumes
(3 per message, 5 per tool call, 12 before the tools and 8 per tool); framing tokens are
stand-in ids that never occur in text, so they match only where the real framing would.
Requests are kept as segments (one per message) so the longest common prefix of two requests is
found by comparing whole messages first.

The cache rule is OpenAI's documented automatic prompt caching: a request's cached part is 0 if
its common prefix with the previous request is under 1,024 tokens, else the prefix rounded down
to a multiple of 128.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from forge.llm.messages import Message
from forge.llm.protocols import ToolSpec

CACHE_MINIMUM = 1024
"""Prefixes shorter than this are not cached."""
CACHE_STEP = 128
"""Cached prefixes are counted in steps of this many tokens."""

Segment = tuple[int, ...]

_MESSAGE_START, _MESSAGE_SEPARATOR, _MESSAGE_END = -1, -2, -3
_CALL_FRAME = (-4, -5, -6, -7, -8)
_TOOLS_PREAMBLE = tuple([-10] * 12)
_TOOL_FRAME = tuple([-11] * 8)
_REPLY_PRIMING = (-12, -13, -14)


def cached_tokens(common_prefix: int) -> int:
    """The cached part of a request whose prefix matches the previous one for this many tokens."""
    if common_prefix < CACHE_MINIMUM:
        return 0
    return common_prefix // CACHE_STEP * CACHE_STEP


def common_prefix(previous: Sequence[Segment], current: Sequence[Segment]) -> int:
    """Tokens the two requests share from the start."""
    shared = 0
    for old, new in zip(previous, current, strict=False):
        if old == new:
            shared += len(new)
            continue
        for a, b in zip(old, new, strict=False):
            if a != b:
                break
            shared += 1
        break
    return shared


def prompt_tokens(segments: Sequence[Segment]) -> int:
    """The request's size in tokens."""
    return sum(len(segment) for segment in segments)


class RequestTokenizer:
    """Tokenizes requests into segments, remembering each distinct message and tool list."""

    def __init__(self, encoding: Any) -> None:
        self.encoding = encoding
        self._messages: dict[tuple[Any, ...], Segment] = {}
        self._texts: dict[str, int] = {}

    def encode(self, text: str) -> list[int]:
        """The text's tokens (special-token text counts as ordinary text)."""
        result: list[int] = self.encoding.encode_ordinary(text)
        return result

    def count(self, text: str) -> int:
        """The text's token count (remembered)."""
        known = self._texts.get(text)
        if known is None:
            known = self._texts[text] = len(self.encode(text))
        return known

    def tools(self, specs: Sequence[ToolSpec]) -> Segment:
        """The tool definitions block: preamble, then per tool its name, description, schema."""
        if not specs:
            return ()
        tokens: list[int] = list(_TOOLS_PREAMBLE)
        for spec in specs:
            schema = json.dumps(spec.parameters, separators=(",", ":"), sort_keys=True)
            tokens += _TOOL_FRAME
            tokens += self.encode(spec.name) + self.encode(spec.description) + self.encode(schema)
        return tuple(tokens)

    def message(self, message: Message) -> Segment:
        """One message: framing, role, content, tool calls, and a tool result's call id."""
        key = (
            message.role,
            message.content,
            tuple((call.name, call.arguments) for call in message.tool_calls),
            message.tool_call_id if message.role == "tool" else None,
        )
        known = self._messages.get(key)
        if known is not None:
            return known
        tokens = [_MESSAGE_START, *self.encode(message.role), _MESSAGE_SEPARATOR]
        tokens += self.encode(message.content)
        for call in message.tool_calls:
            tokens += _CALL_FRAME
            tokens += self.encode(call.name) + self.encode(call.arguments)
        if message.role == "tool" and message.tool_call_id:
            tokens += self.encode(message.tool_call_id)
        tokens.append(_MESSAGE_END)
        segment = self._messages[key] = tuple(tokens)
        return segment

    def request(self, tools: Segment, messages: Sequence[Message]) -> list[Segment]:
        """A whole request: the tools block, each message, the reply priming."""
        return [tools, *(self.message(message) for message in messages), _REPLY_PRIMING]

    def output_tokens(self, message: Message) -> int:
        """Completion tokens of an assistant message: its content and its calls."""
        return self.count(message.content) + sum(
            self.count(call.name) + self.count(call.arguments) for call in message.tool_calls
        )
