"""What fills a request, in words, for the message shown when it cannot be made to fit
(docs/adr/0036). Before, an overflow always blamed "the instructions and excluded tools'
messages", even when one MCP tool's 600 KB schema was what filled it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from forge.llm.messages import Message
from forge.llm.protocols import TokenCounter, ToolSpec

LARGEST_TOOLS_NAMED = 3


def request_breakdown(
    messages: Sequence[Message], tools: Sequence[ToolSpec], counter: TokenCounter
) -> str:
    """The parts of a request by size, largest first, e.g. "tool definitions 15,210 tokens
    (largest: docs__search 14,020), messages 3,935 tokens (12), the system prompt 1,210
    tokens"."""
    parts: list[tuple[int, str]] = []
    count_tools: Callable[[Sequence[ToolSpec]], int] | None = getattr(counter, "count_tools", None)
    if tools and count_tools is not None:
        sizes = sorted(((count_tools([spec]), spec.name) for spec in tools), reverse=True)
        total = count_tools(tools)
        largest = ", ".join(f"{name} {tokens:,}" for tokens, name in sizes[:LARGEST_TOOLS_NAMED])
        parts.append(
            (total, f"tool definitions {total:,} tokens ({len(tools)}; largest: {largest})")
        )
    system = [message for message in messages if message.role == "system"]
    others = [message for message in messages if message.role != "system"]
    if system:
        tokens = sum(counter.count_message(message) for message in system)
        parts.append((tokens, f"the system prompt {tokens:,} tokens"))
    if others:
        tokens = sum(counter.count_message(message) for message in others)
        parts.append((tokens, f"messages {tokens:,} tokens ({len(others)})"))
    parts.sort(key=lambda part: part[0], reverse=True)
    return ", ".join(text for _, text in parts) or "nothing"
