"""The fallback ladder: deterministic shrinking that needs no LLM call.

Used when summarization fails or is not enough, and before a summarization request that
would itself overflow the summarizer's window.

1. Replace old tool outputs by a one-line placeholder naming the tool, its arguments and the
   size of what was removed (the tool message stays, so every call keeps its one result).
2. Drop the oldest messages, whole units at a time (a message, or a tool call with its
   results), leaving one marker per removed stretch with a ledger of what it held.

Never touched: system messages, the pending task (first user message), the latest user
message, any message of a group calling an excluded tool, and the recent tail. When both
steps leave the prompt above target, the tail shrinks (halving) and the ladder repeats, down
to the last unit. The result is provider-valid by construction: only whole units are removed
and tool results are replaced in place.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from forge.context.conversation import Conversation, safe_boundaries
from forge.context.groups import head_end, protected_positions, tool_call_groups, units
from forge.context.ledger import collect_ledger, command_of, exit_code_of, key_arguments
from forge.context.recall import (
    RECALL_KEYS_META,
    folded_recall_ids,
    original_id,
    recall_hint,
    recall_keys_line,
)
from forge.llm.messages import Message, MessageKind, ToolCall
from forge.llm.protocols import TokenCounter

FALLBACK_STRATEGY = "fallback"
PLACEHOLDER_ARGUMENTS_LIMIT = 100
"""Characters of a call's arguments a placeholder keeps (paths and commands fit)."""


@dataclass(frozen=True, slots=True)
class FallbackResult:
    """What the ladder did."""

    tool_outputs_pruned: int
    messages_dropped: int
    tokens_before: int
    tokens_after: int

    def describe(self) -> str | None:
        """A short phrase for events ("3 tool outputs pruned, 12 messages dropped"), or None."""
        parts = []
        if self.tool_outputs_pruned:
            parts.append(f"{self.tool_outputs_pruned} tool outputs pruned")
        if self.messages_dropped:
            parts.append(f"{self.messages_dropped} messages dropped")
        return ", ".join(parts) or None

    @property
    def changed(self) -> bool:
        """True when anything was pruned or dropped."""
        return bool(self.tool_outputs_pruned or self.messages_dropped)


def tail_start(messages: Sequence[Message], keep_recent: int) -> int:
    """The safe boundary where the recent tail of at least `keep_recent` messages begins."""
    limit = len(messages) - max(0, keep_recent)
    return max(b for b in safe_boundaries(messages) if b <= max(0, limit))


def tool_output_placeholder(
    call: ToolCall | None,
    result: Message,
    tokens: int,
    *,
    strategy: str = FALLBACK_STRATEGY,
    step: str = "tool_output",
    label: str = "output pruned to save context",
) -> Message:
    """The one-line stand-in for a pruned (or masked) tool output: the tool, its arguments
    (path, command, pattern), the size removed, for a command its exit code (in the text and
    in meta, so ledgers built later from the placeholder still know it), and the recall key
    of the original (`forge.context.recall`; its full id in meta["recall"])."""
    what = (
        key_arguments(call, limit=PLACEHOLDER_ARGUMENTS_LIMIT)
        if call is not None
        else (result.name or "tool")
    )
    exit_code = exit_code_of(result) if call is not None and command_of(call) else None
    status = f", exit code {exit_code}" if exit_code is not None else ""
    size = int(result.meta.get("characters_before", len(result.content)))
    text = (
        f"[{label}: {what} returned {size} characters (~{tokens} tokens){status}; "
        f"{recall_hint(result)}]"
    )
    meta: dict[str, object] = {
        "strategy": strategy,
        "step": step,
        "tokens_before": tokens,
        "recall": original_id(result),
    }
    if exit_code is not None:
        meta["exit_code"] = exit_code
    return Message(
        role="tool",
        content=text,
        tool_call_id=result.tool_call_id,
        name=result.name,
        kind=MessageKind.PRUNED,
        replaces=(result.id,),
        meta=meta,
    )


def prune_tool_outputs(
    conversation: Conversation,
    counter: TokenCounter,
    *,
    target_tokens: int,
    excluded_tools: Collection[str],
    keep_recent: int,
    start: int = 0,
    end: int | None = None,
) -> int:
    """Step 1: placeholders for tool outputs in [start, min(end, tail)), oldest first, until the
    local count is at most `target_tokens`. Returns how many outputs were replaced."""
    messages = conversation.messages
    total = counter.count_messages(messages)
    stop = min(tail_start(messages, keep_recent), len(messages) if end is None else end)
    calls: dict[str, ToolCall] = {}
    excluded_ids: set[str] = set()
    for group in tool_call_groups(messages):
        assistant = messages[group.start]
        for call in assistant.tool_calls:
            calls[call.id] = call
        if group.is_excluded(excluded_tools):
            excluded_ids.update(group.message_ids)
    replaced = 0
    for index in range(start, stop):
        if total <= target_tokens:
            break
        message = messages[index]
        if message.role != "tool" or message.kind is MessageKind.PRUNED:
            continue
        if message.id in excluded_ids:
            continue
        tokens = counter.count_message(message)
        placeholder = tool_output_placeholder(
            calls.get(message.tool_call_id or ""), message, tokens
        )
        saved = tokens - counter.count_message(placeholder)
        if saved <= 0:
            continue
        conversation.replace_message(conversation.index_of(message.id), placeholder)
        total -= saved
        replaced += 1
    return replaced


def pruned_marker(removed: Sequence[Message]) -> Message:
    """The assistant-role marker left where a stretch of messages was dropped."""
    tool_calls = [call for message in removed for call in message.tool_calls]
    text = (
        f"[Earlier work removed to fit the context window: {len(removed)} messages"
        + (f", {len(tool_calls)} tool calls" if tool_calls else "")
        + ".]"
    )
    ledger = collect_ledger(removed)  # kept in meta; the pinned work ledger shows it (ADR 0050)
    folded = folded_recall_ids(removed)
    keys = recall_keys_line(folded)
    content = f"{text}\n{keys}" if keys else text
    return Message(
        role="assistant",
        content=content,
        kind=MessageKind.PRUNED,
        replaces=tuple(message.id for message in removed),
        meta={
            "strategy": FALLBACK_STRATEGY,
            "step": "drop",
            "ledger": ledger.to_meta(),
            RECALL_KEYS_META: folded,
        },
    )


def drop_oldest(
    conversation: Conversation,
    counter: TokenCounter,
    *,
    target_tokens: int,
    excluded_tools: Collection[str],
    keep_recent: int,
) -> int:
    """Step 2: drop the oldest droppable units (between the head and the recent tail, none
    protected) until the local count is at most `target_tokens`. Returns messages dropped."""
    messages = conversation.messages
    total = counter.count_messages(messages)
    if total <= target_tokens:
        return 0
    protected = protected_positions(messages, excluded_tools)
    first, stop = head_end(messages), tail_start(messages, keep_recent)
    runs: list[list[tuple[int, int]]] = [[]]
    for unit_start, unit_end in units(messages):
        if unit_start < first or unit_end > stop:
            continue
        if any(position in protected for position in range(unit_start, unit_end)):
            runs.append([])
            continue
        if runs[-1] and runs[-1][-1][1] != unit_start:
            runs.append([])
        runs[-1].append((unit_start, unit_end))
    chosen: list[tuple[int, int]] = []  # (start, end) spans to replace by a marker
    for run in runs:
        if not run:
            continue
        if total <= target_tokens:
            break
        span_start = run[0][0]
        span_end, saved = run[-1][1], 0
        for _, unit_end in run:  # the shortest oldest stretch that reaches the target
            saved = _saving(counter, messages[span_start:unit_end])
            if total - saved <= target_tokens:
                span_end = unit_end
                break
        if saved > 0:
            chosen.append((span_start, span_end))
            total -= saved
    dropped = 0
    for span_start, span_end in reversed(chosen):  # from the end, so earlier indices hold
        removed = list(messages[span_start:span_end])
        start = conversation.index_of(removed[0].id)
        conversation.replace_range(start, start + len(removed), [pruned_marker(removed)])
        dropped += len(removed)
    return dropped


def _saving(counter: TokenCounter, span: Sequence[Message]) -> int:
    """Tokens freed by replacing `span` with its marker."""
    freed = sum(counter.count_message(message) for message in span)
    return freed - counter.count_message(pruned_marker(span))


def apply_fallback_ladder(
    conversation: Conversation,
    counter: TokenCounter,
    *,
    target_tokens: int,
    excluded_tools: Collection[str],
    keep_recent: int,
) -> FallbackResult:
    """Run step 1 then step 2, shrinking the recent tail until the local count is at most
    `target_tokens` or nothing more may go."""
    before = counter.count_messages(conversation.messages)
    pruned = dropped = 0
    keep = max(1, keep_recent)
    while True:
        pruned += prune_tool_outputs(
            conversation,
            counter,
            target_tokens=target_tokens,
            excluded_tools=excluded_tools,
            keep_recent=keep,
        )
        if counter.count_messages(conversation.messages) <= target_tokens:
            break
        dropped += drop_oldest(
            conversation,
            counter,
            target_tokens=target_tokens,
            excluded_tools=excluded_tools,
            keep_recent=keep,
        )
        if counter.count_messages(conversation.messages) <= target_tokens or keep == 1:
            break
        keep = max(1, keep // 2)
    after = counter.count_messages(conversation.messages)
    return FallbackResult(pruned, dropped, before, after)
