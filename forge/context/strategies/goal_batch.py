"""GoalBatchCompactionStrategy: old finished turns become one message of the user's goals.

A complete turn is a real user message followed only by summary messages (its work already
summarized). When at least `goal_batch_min_turns` consecutive complete turns lie more than
`goal_batch_age` messages back (counted after the turn's last message), the oldest of them, at
most `goal_batch_max_turns`, are compacted into one user-role goal-batch message keeping the
user's intent, corrections and lasting constraints, plus the merged ledger of their summaries.
The pending task and the latest user message are never part of a batch.

No loop: a batch whose summary would not reduce tokens is never tried again, and one whose
summary failed waits until `goal_batch_age` more messages have arrived.
"""

from __future__ import annotations

from collections.abc import Sequence

from forge.context.conversation import Conversation
from forge.context.errors import SummarizationError, SummarizationSkipped
from forge.context.groups import Turn, latest_user_index, pending_task_index, user_turns
from forge.context.ledger import collect_ledger
from forge.context.prompts import ContentType
from forge.context.strategies.base import (
    StrategyRun,
    StrategyServices,
    SummarizationStrategy,
    prior_summary_before,
    with_ledger,
)
from forge.context.strategies.cooldown import Cooldown
from forge.context.transcript import render_messages
from forge.llm.errors import LLMError
from forge.llm.messages import Message, MessageKind
from forge.llm.protocols import Provider


class GoalBatchCompactionStrategy(SummarizationStrategy):
    """Compacts the oldest complete turns into one goal-batch message."""

    name = "goal_batch"
    forceable = False

    def __init__(self, services: StrategyServices) -> None:
        super().__init__(services)
        self.cooldown = Cooldown()
        """Batches (keyed by their last message's id) that failed or would not help."""

    def eligible_turns(self, messages: Sequence[Message]) -> list[Turn]:
        """The oldest run of consecutive eligible complete turns (at most the maximum), or []
        when that batch is waiting after a failure or would not help."""
        settings = self.settings
        protected = {pending_task_index(messages), latest_user_index(messages)}
        length = len(messages)
        run: list[Turn] = []
        for turn in user_turns(messages):
            eligible = (
                turn.start not in protected
                and turn.is_complete(messages)
                and length - turn.end > settings.goal_batch_age
            )
            if eligible and run and run[-1].end == turn.start:
                run.append(turn)
            elif eligible:
                if len(run) >= settings.goal_batch_min_turns:
                    break
                run = [turn]
            elif len(run) >= settings.goal_batch_min_turns:
                break
            else:
                run = []
        if len(run) < settings.goal_batch_min_turns:
            return []
        batch = run[: settings.goal_batch_max_turns]
        if self.cooldown.waiting(messages[batch[-1].end - 1].id, length):
            return []
        return batch

    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """Enough old complete turns in a row."""
        return bool(self.eligible_turns(conversation.messages))

    def pending_items(self, conversation: Conversation, *, force: bool = False) -> int:
        """Turns a run now would compact."""
        return len(self.eligible_turns(conversation.messages))

    async def run(self, conversation: Conversation, provider: Provider, run: StrategyRun) -> int:
        """Compact the eligible turns; returns how many turns were compacted."""
        messages = conversation.messages
        self.cooldown.forget_missing({message.id for message in messages})
        turns = self.eligible_turns(messages)
        if not turns:
            raise SummarizationSkipped("no run of complete turns old enough to compact")
        start, end = turns[0].start, turns[-1].end
        replaced = messages[start:end]
        key = replaced[-1].id
        try:
            result = await self.services.summarizer.summarize(
                render_messages(replaced),
                provider,
                content_type=ContentType.USER_GOALS,
                prior_summary=prior_summary_before(messages, start),
                instructions=run.instructions,
            )
        except (LLMError, SummarizationError):
            self.cooldown.failed(key, len(conversation), self.settings.goal_batch_age)
            self.progress(run, 0, len(turns), failed=len(turns))
            raise
        self.progress(run, len(turns), len(turns))  # in turns, as pending_items counts
        tokens_before = self.tokens_of(replaced)
        ledger = collect_ledger(replaced)
        header = f"[Earlier requests of mine, compacted: {len(turns)} turns]"
        message = self.summary_of(
            replaced,
            result,
            with_ledger(f"{header}\n{result.text}", ledger),
            tokens_before=tokens_before,
            ledger=ledger,
            role="user",
            kind=MessageKind.GOAL_BATCH,
        )
        if int(message.meta["tokens_after"]) >= tokens_before:
            self.cooldown.unhelpful(key)
            raise SummarizationSkipped("the goal batch would not reduce tokens")
        if not self.swap_in(conversation, message, run, result):
            raise SummarizationSkipped("the conversation changed under the goal batch")
        return len(turns)
