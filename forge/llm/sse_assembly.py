"""Assemble Chat Completions stream chunks into Forge stream events and one final message.

The assembler is pure: it is fed decoded chunk objects (already JSON-parsed) and returns the
events each one produces, so it can be tested and reasoned about without any HTTP. The quirks
it survives are the ones recorded in the shared corpus: tool-call ids and names repeated in
every delta, follow-up deltas with an empty id, a first tool delta without arguments, usage in
a choice-less final chunk or in a content chunk or twice, several interleaved choices (only
choice 0 is kept), and an error object inside an ordinary chunk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from forge.llm.errors import TransportError
from forge.llm.http_errors import error_from_stream_payload
from forge.llm.messages import Message, ToolCall
from forge.llm.stream import (
    Completion,
    MessageDelta,
    ReasoningDelta,
    StreamEvent,
    StreamFinished,
    ToolCallComplete,
    ToolCallDelta,
    Usage,
    UsageReported,
)
from forge.llm.wire_format import (
    new_tool_call_id,
    normalized_arguments,
    parse_usage,
    reasoning_of,
    visible_text_of,
)
from forge.unicode_repair import StreamRepair, repaired


@dataclass
class _PartialToolCall:
    """A tool call whose pieces are still arriving (kept as a list: joining once at the end
    keeps a call that arrives in many small pieces linear in its size)."""

    id: str = ""
    name: str = ""
    pieces: list[str] = field(default_factory=list)
    has_arguments: bool = False
    repair: StreamRepair = field(default_factory=lambda: StreamRepair("the model server"))


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


class StreamAssembler:
    """Turns chunks into events and remembers enough to build the final `Completion`."""

    def __init__(self, requested_model: str) -> None:
        self._requested_model = requested_model
        self._reported_model = ""
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._tool_calls: dict[int, _PartialToolCall] = {}
        self._last_tool_index: int | None = None
        self._usage: Usage | None = None
        self._finish_reason: str | None = None
        self._text_repair = StreamRepair("the model server")
        self._reasoning_repair = StreamRepair("the model server")
        self.output_started = False
        """True once any text, reasoning or tool-call piece was produced: from then on a
        retry would show the user the same output twice, so the provider must not retry."""

    @property
    def finish_reason_seen(self) -> bool:
        """Whether the server said why choice 0 ended."""
        return self._finish_reason is not None

    def feed(self, chunk: Any) -> list[StreamEvent]:
        """The events one decoded chunk produces. Raises the typed error for an error chunk."""
        if not isinstance(chunk, dict):
            return []
        if chunk.get("error") is not None:
            raise error_from_stream_payload(chunk)
        events: list[StreamEvent] = []
        model = chunk.get("model")
        if isinstance(model, str) and model:
            self._reported_model = model
        for choice in chunk.get("choices") or ():
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                events.extend(self._feed_choice(choice))
        usage = parse_usage(chunk.get("usage"))
        if usage is not None:
            self._usage = usage
            events.append(UsageReported(usage))
        return events

    def _feed_choice(self, choice: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        delta = choice.get("delta")
        if isinstance(delta, dict):
            reasoning = self._reasoning_repair.feed(reasoning_of(delta))
            if reasoning:
                self._reasoning.append(reasoning)
                events.append(ReasoningDelta(reasoning))
            text = self._text_repair.feed(visible_text_of(delta))
            if text:
                self._text.append(text)
                events.append(MessageDelta(text))
            for raw_call in delta.get("tool_calls") or ():
                if isinstance(raw_call, dict):
                    events.extend(self._feed_tool_call(raw_call))
        finish_reason = choice.get("finish_reason")
        if isinstance(finish_reason, str) and finish_reason:
            self._finish_reason = finish_reason
        if events:
            self.output_started = True
        return events

    def _tool_index(self, raw_call: dict[str, Any], call_id: str, name: str) -> int:
        index = raw_call.get("index")
        if isinstance(index, int) and not isinstance(index, bool):
            return index
        # Without an index: a known id continues its call, an unseen id starts one, and so
        # does a name arriving after the previous call already had its name and arguments.
        known = {partial.id: number for number, partial in self._tool_calls.items()}
        if call_id and call_id in known:
            return known[call_id]
        if call_id or self._last_tool_index is None:
            return len(self._tool_calls)
        last = self._tool_calls[self._last_tool_index]
        if name and last.name and (name != last.name or last.has_arguments):
            return len(self._tool_calls)
        return self._last_tool_index

    def _feed_tool_call(self, raw_call: dict[str, Any]) -> list[StreamEvent]:
        call_id = repaired(_string(raw_call.get("id")), "the model server")
        function = raw_call.get("function")
        function = function if isinstance(function, dict) else {}
        name = repaired(_string(function.get("name")), "the model server")
        raw_arguments = _string(function.get("arguments"))
        index = self._tool_index(raw_call, call_id, name)
        self._last_tool_index = index
        partial = self._tool_calls.setdefault(index, _PartialToolCall())
        arguments = partial.repair.feed(raw_arguments)
        # Ids and names may be repeated in every delta: keep the first real one, never
        # concatenate, never let an empty follow-up erase it.
        if call_id and not partial.id:
            partial.id = call_id
        if name and not partial.name:
            partial.name = name
        partial.pieces.append(arguments)
        partial.has_arguments = partial.has_arguments or bool(arguments)
        if not (call_id or name or arguments):
            return []
        return [ToolCallDelta(index, call_id or None, name or None, arguments)]

    def finish(self, *, saw_done: bool) -> list[StreamEvent]:
        """The closing events once the stream ended: each tool call complete (in index order)
        then `StreamFinished`. A stream cut before both `[DONE]` and a finish reason is an
        error, because what arrived may be a fraction of the answer."""
        if not saw_done and not self.finish_reason_seen:
            raise TransportError("The stream ended before the reply was complete")
        events: list[StreamEvent] = []
        reasoning = self._reasoning_repair.flush()
        if reasoning:
            self._reasoning.append(reasoning)
            events.append(ReasoningDelta(reasoning))
        text = self._text_repair.flush()
        if text:
            self._text.append(text)
            events.append(MessageDelta(text))
        calls: list[ToolCall] = []
        for index in sorted(self._tool_calls):
            partial = self._tool_calls[index]
            partial.pieces.append(partial.repair.flush())
            call = ToolCall(
                id=partial.id or new_tool_call_id(),
                name=partial.name,
                arguments=normalized_arguments("".join(partial.pieces)),
            )
            calls.append(call)
            events.append(ToolCallComplete(index, call))
        events.append(StreamFinished(self.completion(tuple(calls))))
        return events

    def completion(self, calls: tuple[ToolCall, ...]) -> Completion:
        """The assembled reply with these finished tool calls."""
        return Completion(
            message=Message(
                role="assistant",
                content="".join(self._text),
                tool_calls=calls,
                reasoning="".join(self._reasoning),
            ),
            usage=self._usage,
            finish_reason=self._finish_reason,
            model=self._reported_model or self._requested_model,
        )
