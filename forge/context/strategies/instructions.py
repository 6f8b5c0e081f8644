"""InstructionCondensationStrategy: the user's own messages stay verbatim within their share.

Every user instruction is protected from the other tiers and from the fallback. Only when the
instructions alone (the latest user message left out) take more than `user_instruction_share`
of the budget are the oldest large ones condensed, one request each, by a prompt that must keep
every instruction, requirement, correction, path and number (`ContentType.USER_INSTRUCTIONS`).
A condensed message is still a user instruction (role user, kind NORMAL, `meta["condensed"]`):
it stays protected and is never condensed again. Nothing is ever dropped.

Bookkeeping is O(new) per LLM call: the instructions' tokens are added up as they arrive.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence

from forge.context.adaptive import SummaryLevel, SummaryResult
from forge.context.conversation import Conversation
from forge.context.errors import PartialSummarizationError, SummarizationError
from forge.context.groups import is_instruction
from forge.context.prompts import ContentType
from forge.context.strategies.base import StrategyServices, SummarizationStrategy
from forge.context.strategies.contract import Capabilities, StrategyRun
from forge.context.strategies.cooldown import Cooldown
from forge.context.strategies.deterministic import AppendCursor
from forge.llm.errors import LLMError
from forge.llm.messages import Message, MessageKind
from forge.llm.protocols import Provider

INSTRUCTIONS = "instructions"
MINIMUM_CONDENSE_TOKENS = 200
"""An instruction smaller than this is never worth condensing."""


class InstructionCondensationStrategy(SummarizationStrategy):
    """Condenses the oldest user instructions when they alone outgrow their share."""

    name = INSTRUCTIONS
    capabilities = Capabilities(uses_llm=True, forceable=False)

    def __init__(self, services: StrategyServices) -> None:
        super().__init__(services)
        self._cursor = AppendCursor(relevant=is_instruction)  # an output masked is not news
        self._tokens = 0
        """Tokens of every instruction seen (the latest included)."""
        self._latest_tokens = 0
        self._max_tokens: int | None = None
        self.cooldown = Cooldown()
        """Instructions whose condensing failed (wait) or would not shrink them (never again)."""

    def instruction_tokens(self, conversation: Conversation) -> int:
        """Tokens of the user's instructions, the latest user message left out (O(new))."""
        restarted, fresh = self._cursor.new_messages(conversation)
        if restarted:
            self._tokens = self._latest_tokens = 0
        counter = self.services.counter
        for message in fresh:
            if is_instruction(message):
                tokens = counter.count_message(message)
                self._tokens += tokens
                self._latest_tokens = tokens
        return self._tokens - self._latest_tokens

    def _share(self, max_tokens: int) -> int:
        return int(self.settings.user_instruction_share * max_tokens)

    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """The instructions alone are above their share and one of them can be condensed."""
        self._max_tokens = max_tokens
        if self.instruction_tokens(conversation) <= self._share(max_tokens):
            return False
        return bool(self.candidates(conversation.messages, max_tokens))

    def candidates(self, messages: Sequence[Message], max_tokens: int) -> list[Message]:
        """The oldest condensable instructions whose condensing brings the rest within the
        share (at most all but the latest)."""
        counter = self.services.counter
        instructions = [m for m in messages if is_instruction(m)]
        if not instructions:
            return []
        older = instructions[:-1]
        excess = sum(counter.count_message(m) for m in older) - self._share(max_tokens)
        chosen: list[Message] = []
        for message in older:
            if excess <= 0:
                break
            tokens = counter.count_message(message)
            if message.meta.get("condensed") or tokens < MINIMUM_CONDENSE_TOKENS:
                continue
            if self.cooldown.waiting(message.id, len(messages)):
                continue
            chosen.append(message)
            excess -= tokens // 2  # a condensed instruction keeps about half, at most
        return chosen

    def pending_items(
        self, conversation: Conversation, max_tokens: int = 0, *, force: bool = False
    ) -> int:
        """Instructions a run now would condense."""
        if self._max_tokens is None:
            return 0
        return len(self.candidates(conversation.messages, self._max_tokens))

    async def summarize_with(
        self, conversation: Conversation, provider: Provider, run: StrategyRun
    ) -> int:
        """Condense the chosen instructions, one request each; returns how many were."""
        if self._max_tokens is None:
            return 0
        self.cooldown.forget_missing({message.id for message in conversation.messages})
        chosen = self.candidates(conversation.messages, self._max_tokens)
        counter = self.services.counter

        def condense(message: Message) -> Awaitable[SummaryResult]:
            return self.services.summarizer.summarize(
                message.content,
                provider,
                content_type=ContentType.USER_INSTRUCTIONS,
                target_tokens=max(64, counter.count_text(message.content) // 2),
            )

        outcomes = await self.summarize_concurrently(run, chosen, condense)
        applied = 0
        errors: list[BaseException] = []
        for message, outcome in zip(chosen, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, LLMError | SummarizationError):
                    raise outcome
                errors.append(outcome)
                self.cooldown.failed(message.id, len(conversation), self.settings.goal_batch_age)
                continue
            if outcome.level is not SummaryLevel.NONE and self._apply(
                conversation, message, outcome, run
            ):
                applied += 1
            else:
                self.cooldown.unhelpful(message.id)
        if errors:
            raise PartialSummarizationError(applied, len(errors), errors[0])
        return applied

    def _apply(
        self, conversation: Conversation, original: Message, result: SummaryResult, run: StrategyRun
    ) -> bool:
        counter = self.services.counter
        content = f"[My earlier message, condensed]\n{result.text.strip()}"
        tokens_before = counter.count_message(original)
        if counter.count_text(content) >= tokens_before:
            return False
        condensed = Message(
            role="user",
            content=content,
            kind=MessageKind.NORMAL,
            replaces=(original.id,),
            meta={
                "condensed": True,
                "strategy": self.name,
                "model": result.model,
                "tokens_before": tokens_before,
                "tokens_after": counter.count_text(content),
            },
        )
        return self.swap_in(conversation, condensed, run, result)
