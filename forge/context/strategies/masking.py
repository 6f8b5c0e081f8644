"""ObservationMaskingStrategy (tier 1): older tool outputs become one-line placeholders.

Every tool output older than the newest `mask_keep_recent` (never fewer than 3) is replaced by
the placeholder the fallback uses (tool, key arguments, size, exit code), with no LLM call.
Masking waits until `mask_batch` outputs can be masked and then masks them all at once: the
prompt's prefix then changes once per batch, not on every call, so providers' prompt caches
keep hitting between batches. Under pressure (the threshold trigger reached, or forced by the
auto-summary threshold or /compact) it masks whatever it can at once.

Never masked: excluded tools' outputs, outputs already masked, pruned or summarized, and
outputs whose placeholder would not be smaller. When LLM tool-call summaries are on
(`tool_call_summaries`), aging groups go to that tier instead and masking acts only under
pressure or when summaries are off for the session (a failing summarization model).

Bookkeeping is O(new) per LLM call, masking runs included: candidates are found, by
position, as messages arrive (`AppendCursor`), and outputs replaced in place by another tier
are re-judged where they stand; only a change that moves messages (a summary swapped in)
rebuilds them once.
"""

from __future__ import annotations

from collections.abc import Callable

from forge.config.settings import ContextSettings
from forge.context.budget import reached
from forge.context.cache_pricing import NO_CACHE, CachePricing
from forge.context.conversation import Conversation
from forge.context.fallback import tool_output_placeholder
from forge.context.prefix_sums import PrefixSums
from forge.context.recall import original_id, recall_hint
from forge.context.rewrite_gate import RewriteGate, rewritten_from
from forge.context.strategies.contract import Capabilities
from forge.context.strategies.deterministic import (
    AppendCursor,
    DeterministicStrategy,
    excluded_call_ids,
)
from forge.context.strategies.mask_choice import OutputNeeds
from forge.llm.messages import Message, MessageKind, ToolCall
from forge.llm.protocols import TokenCounter

MASKING = "masking"
MASK_LABEL = "output masked to save context"
MINIMUM_SAVING_TOKENS = 100
"""An output is worth masking only if its placeholder saves at least this many tokens."""
PLACEHOLDER_TOKENS = 50
"""What a placeholder is taken to cost when judging whether a batch pays: the replay's masking
placeholders at 16k measured 35-81 tokens, 52 on average (45 of them); the batch's real saving
is checked output by output when it is applied."""


class ObservationMaskingStrategy(DeterministicStrategy):
    """Masks older tool outputs in batches."""

    name = MASKING
    capabilities = Capabilities(in_place=True)

    def __init__(
        self,
        settings: ContextSettings,
        counter: TokenCounter,
        *,
        summaries_active: Callable[[], bool] = lambda: False,
        cache_pricing: Callable[[], CachePricing] = lambda: NO_CACHE,
        last_sent: Callable[[], tuple[int, int] | None] = lambda: None,
    ) -> None:
        super().__init__(settings, counter)
        self.summaries_active = summaries_active
        """True while the LLM tool-call tier takes aging groups (see module docstring)."""
        self.cache_pricing = cache_pricing
        """The main model's prompt-cache prices: a batch nothing forces waits until it pays."""
        self.last_sent = last_sent
        """(conversation id, version) of the request last sent (`StrategyServices.sent`)."""
        self._tokens = PrefixSums()
        """Every message's tokens by position: what follows a candidate, in O(log n)."""
        self._candidate_tokens = 0
        """Tokens of the candidates, summed."""
        self._requests = 0
        """Assistant messages seen: the requests made so far."""
        self._gate = RewriteGate()
        """What keeping the maskable outputs has cost since a batch could first be masked."""
        self._priced = False
        """Whether `_tokens` is kept: only once cache prices are known (else nothing reads it)."""
        self._cursor = AppendCursor(follow=True)
        self._calls: dict[str, ToolCall] = {}
        self._tool_positions: list[int] = []
        """Positions of every tool output seen, in order (masked ones too: they count as
        outputs). Positions hold until a change other than an append or an in-place
        replacement, which makes the cursor start over."""
        self._candidates: dict[int, int] = {}
        """Positions of outputs worth masking once old enough, with their tokens."""
        self._excluded_calls: set[str] = set()
        """Calls in a group with an excluded tool (never masked)."""
        self.needs = OutputNeeds()
        """What says which outputs will be needed (`forge.context.strategies.mask_choice`)."""

    # --- bookkeeping ---------------------------------------------------------------------
    def _update(self, conversation: Conversation) -> None:
        priced = self.cache_pricing().rewrites_wait
        if priced and not self._priced:
            self._cursor.reset()  # prices just became known: count every position once
        self._priced = priced
        restarted, fresh = self._cursor.new_messages(conversation)
        if restarted:
            self._calls.clear()
            self._tool_positions.clear()
            self._candidates.clear()
            self._candidate_tokens = 0
            self._excluded_calls.clear()
            self.needs.clear()
            self._tokens.clear()
            self._requests = 0
            self._gate.paid()
        excluded = set(self.settings.excluded_tools)
        for position in self._cursor.replaced:  # e.g. an output cut by the ingest cap
            message = conversation[position]
            if priced:
                self._tokens.set(position, self.counter.count_message(message))
            self._drop_candidate(position)
            if _is_output(message) and self._worth_masking(message, excluded):
                self._add_candidate(position, message)
        first = len(conversation) - len(fresh)
        for offset, message in enumerate(fresh):
            if priced:
                self._tokens.append(self.counter.count_message(message))
            for call in message.tool_calls:
                self._calls[call.id] = call
            self._excluded_calls.update(excluded_call_ids([message], excluded))
            if message.role == "assistant":
                self.needs.assistant(message)
                self._requests += 1
            if not _is_output(message):
                continue
            self.needs.output(first + offset, message, self._calls.get(message.tool_call_id or ""))
            self._tool_positions.append(first + offset)
            if self._worth_masking(message, excluded):
                self._add_candidate(first + offset, message)

    def _add_candidate(self, position: int, message: Message) -> None:
        tokens = self.counter.count_message(message)
        self._candidates[position] = tokens
        self._candidate_tokens += tokens

    def _drop_candidate(self, position: int) -> None:
        self._candidate_tokens -= self._candidates.pop(position, 0)

    def _worth_masking(self, message: Message, excluded: set[str]) -> bool:
        if message.kind is MessageKind.OBSERVATION:
            return self.counter.count_message(message) >= 2 * MINIMUM_SAVING_TOKENS
        if message.kind is not MessageKind.NORMAL or (message.name or "") in excluded:
            return False
        if (message.tool_call_id or "") in self._excluded_calls:
            return False
        return self.counter.count_message(message) >= 2 * MINIMUM_SAVING_TOKENS

    def _kept(self) -> set[int]:
        """The outputs kept now: the newest (unless superseded), the referenced ones, the
        latest failing run (`OutputNeeds.kept`). O(mask_keep_recent + its window)."""
        keep = max(3, self.settings.mask_keep_recent)
        return self.needs.kept(self._tool_positions[-keep:])

    def _maskable(self) -> list[int]:
        kept = self._kept()
        return [position for position in self._candidates if position not in kept]

    def _maskable_count(self) -> int:
        """len(self._maskable()) in O(kept): the check before every call."""
        kept = self._kept()
        return len(self._candidates) - sum(1 for position in kept if position in self._candidates)

    def _batch_pays(self, conversation: Conversation, maskable: int) -> bool:
        """Whether masking the `maskable` outputs now, unforced, pays under the model's cache
        prices: once keeping them has cost (since the last batch) as much as the rewrite would
        (ski rental, `forge.context.cache_pricing`). O(kept + log n): the saving from the
        candidates' running sum, the rewritten tail from the oldest maskable candidate (in
        arrival order) to the end."""
        pricing = self.cache_pricing()
        if not pricing.rewrites_wait:
            return True
        kept = self._kept()
        saved = self._candidate_tokens - sum(self._candidates.get(p, 0) for p in kept)
        saved -= maskable * PLACEHOLDER_TOKENS
        first = next((p for p in self._candidates if p not in kept), None)
        if first is None:
            return False
        head = 1 if len(conversation) and conversation[0].role == "system" else 0
        length = len(conversation)
        start = pricing.rewrite_start(first, length, head)
        end = length  # what this rewrite un-caches that the next request would not anyway
        paid = rewritten_from(conversation, self.last_sent())
        if paid is not None:
            end = max(start, min(length, pricing.rewrite_start(paid, length, head)))
        tail = self._tokens.prefix(end) - self._tokens.prefix(start)
        if end < length:
            tail += saved  # the removed tokens themselves are un-cached either way
        return self._gate.pays(pricing, saved, tail, self._requests)

    # --- the strategy --------------------------------------------------------------------
    def enabled(self) -> bool:
        """Switched by `context.observation_masking`."""
        return self.settings.observation_masking

    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """A full batch is ready (or, under pressure, anything is)."""
        if not self.settings.observation_masking:
            return False
        self._update(conversation)
        maskable = self._maskable_count()
        if not maskable:
            return False
        if reached(current_tokens, max_tokens, self.settings.threshold_trigger):
            return True
        if self.summaries_active() or maskable < self.settings.mask_batch:
            return False
        return self._batch_pays(conversation, maskable)

    def pending_items(
        self, conversation: Conversation, max_tokens: int, *, force: bool = False
    ) -> int:
        """Outputs a run now would mask."""
        self._update(conversation)
        return self._maskable_count()

    def apply(self, conversation: Conversation, max_tokens: int, *, force: bool = False) -> int:
        """Mask every maskable output; returns how many were masked."""
        self._update(conversation)
        maskable = self._maskable()
        if not maskable:
            return 0
        masked = 0
        for index in maskable:
            self._drop_candidate(index)
            message = conversation[index]
            tokens = self.counter.count_message(message)
            placeholder = (
                observation_placeholder(message, tokens)
                if message.kind is MessageKind.OBSERVATION
                else tool_output_placeholder(
                    self._calls.get(message.tool_call_id or ""),
                    message,
                    tokens,
                    strategy=MASKING,
                    step="mask",
                    label=MASK_LABEL,
                )
            )
            if tokens - self.counter.count_message(placeholder) < MINIMUM_SAVING_TOKENS:
                continue
            conversation.replace_message(index, placeholder)
            if self._priced:
                self._tokens.set(index, self.counter.count_message(placeholder))
            masked += 1
        self._cursor.new_messages(conversation)  # our own edits are not news
        self._gate.paid()
        return masked


def _is_output(message: Message) -> bool:
    """A tool result or an observation (a user-role output)."""
    return message.role == "tool" or message.kind is MessageKind.OBSERVATION


def observation_placeholder(message: Message, tokens: int) -> Message:
    """The one-line stand-in for a masked observation (a user-role output)."""
    first_line = message.content.strip().splitlines()[0][:80] if message.content.strip() else ""
    text = f"[{MASK_LABEL}: an output of {len(message.content)} characters (~{tokens} tokens)"
    text += f' beginning "{first_line}"' if first_line else ""
    text += f"; {recall_hint(message)}]"
    return Message(
        role=message.role,
        content=text,
        kind=MessageKind.PRUNED,
        replaces=(message.id,),
        meta={
            "strategy": MASKING,
            "step": "mask",
            "tokens_before": tokens,
            "recall": original_id(message),
        },
    )
