"""Where Forge puts Anthropic prompt-cache breakpoints (docs/adr/0037). Pure functions.

The API allows at most 4 `cache_control` breakpoints. A breakpoint caches the prefix up to and
including its block (tools, then system, then messages); a later request that sends the same
bytes up to a breakpoint position reads that prefix from the cache. Forge places:

1. the last tool definition — the tool list survives a system prompt change;
2. the system prompt's last block — tools and system prompt, the same every turn;
3. the user message before the newest one (the newest message of the *previous* request in an
   agent loop: the assistant's reply and the tool results came after it) — this request reads
   everything the previous request wrote;
4. the newest message — this request writes the whole prompt, for the next one to read.

User and assistant alternate after merging and the newest message is the user's, so position
3 is the message three from the end. The markers themselves are not part of the cached bytes:
moving breakpoint 4 to a new message each turn keeps the prefix identical.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from forge.llm.anthropic_wire import MessagesRequest

CacheTtl = Literal["5m", "1h"]

MAX_BREAKPOINTS = 4
"""The API's limit per request."""


def cache_control(ttl: CacheTtl) -> dict[str, str]:
    """The `cache_control` value for `ttl` (5 minutes is the API's default and sent bare)."""
    if ttl == "1h":
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def message_breakpoints(message_count: int) -> tuple[int, ...]:
    """Indexes (into the merged message list) of the messages that get a breakpoint: the
    newest, and the one three before the end when there is one (see the module docstring)."""
    if message_count <= 0:
        return ()
    if message_count >= 3:
        return (message_count - 3, message_count - 1)
    return (message_count - 1,)


def with_breakpoints(request: MessagesRequest, ttl: CacheTtl = "5m") -> MessagesRequest:
    """A copy of `request` with the breakpoints of the module docstring; at most
    `MAX_BREAKPOINTS`, each on the last content block of its part."""
    marker = cache_control(ttl)
    tools = copy.deepcopy(request.tools)
    system = copy.deepcopy(request.system)
    messages = copy.deepcopy(request.messages)
    if tools:
        tools[-1]["cache_control"] = dict(marker)
    if system:
        system[-1]["cache_control"] = dict(marker)
    for index in message_breakpoints(len(messages)):
        _mark_last_block(messages[index], marker)
    return MessagesRequest(tools=tools, system=system, messages=messages)


def _mark_last_block(message: dict[str, Any], marker: dict[str, str]) -> None:
    content = message.get("content")
    if isinstance(content, list):
        # Thinking blocks cannot carry a marker; the last other block takes it.
        for block in reversed(content):
            if block.get("type") not in ("thinking", "redacted_thinking"):
                block["cache_control"] = dict(marker)
                return


def breakpoint_count(request: MessagesRequest) -> int:
    """How many `cache_control` markers `request` carries (for tests and the benchmark)."""
    blocks = [*request.tools, *request.system]
    for message in request.messages:
        content = message.get("content")
        if isinstance(content, list):
            blocks.extend(content)
    return sum(1 for block in blocks if "cache_control" in block)
