"""GoalBatchCompactionStrategy: the work of old finished turns becomes one goal message.

A finished turn (see `Turn.is_complete`) ends with a plain answer, a turn-ending tool call, or
only summaries of its work. When at least `goal_batch_min_turns` consecutive finished turns end
more than `goal_batch_age` messages back, the oldest of them (at most `goal_batch_max_turns`)
are compacted: every user message stays verbatim where it is, excluded tools' calls stay as
they are, and all the other work of those turns — tool calls, results, answers, summaries —
becomes ONE assistant goal message (kind `GOAL_BATCH`, with the merged ledger) in the place of
the batch's last stretch of work. The turn of the latest user message is never in a batch.

No loop: a batch whose summary would not reduce tokens is never tried again, and one whose
summary failed waits until `goal_batch_age` more messages have arrived.
"""

from __future__ import annotations

from collections.abc import Sequence

from forge.context.conversation import Conversation
from forge.context.errors import SummarizationError, SummarizationSkipped
from forge.context.groups import (
    Turn,
    is_instruction,
    latest_user_index,
    protected_positions,
    units,
    user_turns,
)
from forge.context.ledger import collect_ledger
from forge.context.prompts import ContentType
from forge.context.strategies.base import (
    StrategyRun,
    StrategyServices,
    SummarizationStrategy,
    with_ledger,
)
from forge.context.strategies.cooldown import Cooldown
from forge.context.strategies.deterministic import AppendCursor
from forge.context.transcript import render_messages
from forge.llm.errors import LLMError
from forge.llm.messages import Message, MessageKind
from forge.llm.protocols import Provider

MINIMUM_WORK_TOKENS = 150
"""A turn whose work is smaller than this is not worth a goal-batch request."""


class GoalBatchCompactionStrategy(SummarizationStrategy):
    """Compacts the work of the oldest finished turns into one goal message."""

    name = "goal_batch"
    forceable = False

    def __init__(self, services: StrategyServices) -> None:
        super().__init__(services)
        self.cooldown = Cooldown()
        """Batches (keyed by their last message's id) that failed or would not help."""
        self._cursor = AppendCursor()
        self._quiet_until: int | None = None
        """While only plain messages arrive, no batch can form before this length."""

    def eligible_turns(self, messages: Sequence[Message]) -> list[Turn]:
        """The oldest run of consecutive eligible finished turns (at most the maximum), or []
        when that batch is waiting after a failure or would not help."""
        settings = self.settings
        latest = latest_user_index(messages)
        length = len(messages)
        run: list[Turn] = []
        for turn in user_turns(messages):
            eligible = (
                turn.start != latest
                and length - turn.end > settings.goal_batch_age
                and turn.is_complete(messages)
                and self._work_tokens(messages, turn) >= MINIMUM_WORK_TOKENS
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

    def _work_tokens(self, messages: Sequence[Message], turn: Turn) -> int:
        counter = self.services.counter
        return sum(
            counter.count_message(message)
            for start, end in self.work_stretches(messages, turn.start, turn.end)
            for message in messages[start:end]
        )

    def work_stretches(
        self, messages: Sequence[Message], start: int, end: int
    ) -> list[tuple[int, int]]:
        """The [start, end) stretches of work in messages[start:end]: whole units, none
        holding a user message, a system message or an excluded tool's call."""
        protected = protected_positions(messages, set(self.settings.excluded_tools))
        stretches: list[tuple[int, int]] = []
        for unit_start, unit_end in units(messages):
            if unit_start < start or unit_end > end:
                continue
            if any(position in protected for position in range(unit_start, unit_end)):
                continue
            if stretches and stretches[-1][1] == unit_start:
                stretches[-1] = (stretches[-1][0], unit_end)
            else:
                stretches.append((unit_start, unit_end))
        return stretches

    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """Enough old finished turns in a row. O(new) while nothing can change the answer:
        only a new user message, a change other than an append, or turns ageing past
        `goal_batch_age` can make a batch eligible."""
        restarted, fresh = self._cursor.new_messages(conversation)
        quiet = self._quiet_until
        if (
            not restarted
            and quiet is not None
            and len(conversation) < quiet
            and not any(is_instruction(message) for message in fresh)
        ):
            return False
        messages = conversation.messages
        if self.eligible_turns(messages):
            self._quiet_until = None
            return True
        age, length = self.settings.goal_batch_age, len(messages)
        latest = latest_user_index(messages)
        ageing = [
            turn.end + age + 1
            for turn in user_turns(messages)
            if turn.start != latest and length - turn.end <= age
        ]
        self._quiet_until = min([*ageing, length + age])
        return False

    def pending_items(self, conversation: Conversation, *, force: bool = False) -> int:
        """Turns a run now would compact."""
        return len(self.eligible_turns(conversation.messages))

    async def run(self, conversation: Conversation, provider: Provider, run: StrategyRun) -> int:
        """Compact the eligible turns; returns how many turns were compacted."""
        messages = conversation.messages
        self.cooldown.forget_missing({message.id for message in messages})
        turns = self.eligible_turns(messages)
        if not turns:
            raise SummarizationSkipped("no run of finished turns old enough to compact")
        start, end = turns[0].start, turns[-1].end
        stretches = self.work_stretches(messages, start, end)
        work = [message for a, b in stretches for message in messages[a:b]]
        key = messages[end - 1].id
        try:
            result = await self.services.summarizer.summarize(
                render_messages(messages[start:end]),
                provider,
                content_type=ContentType.USER_GOALS,
                prior_summary=_prior_summary(messages, start),
                instructions=run.instructions,
            )
        except (LLMError, SummarizationError):
            self.cooldown.failed(key, len(conversation), self.settings.goal_batch_age)
            self.progress(run, 0, 1)
            raise
        self.progress(run, 1, 1)
        tokens_before = self.tokens_of(work)
        ledger = collect_ledger(work)
        header = f"[Summary of my work on the {len(turns)} requests above]"
        message = self.summary_of(
            work,
            result,
            with_ledger(f"{header}\n{result.text}", ledger),
            tokens_before=tokens_before,
            ledger=ledger,
            kind=MessageKind.GOAL_BATCH,
        )
        if int(message.meta["tokens_after"]) >= tokens_before:
            self.cooldown.unhelpful(key)
            raise SummarizationSkipped("the goal batch would not reduce tokens")
        if not self._swap_stretches(conversation, messages, stretches, message):
            raise SummarizationSkipped("the conversation changed under the goal batch")
        self.archive(message, run, result)
        return len(turns)

    def _swap_stretches(
        self,
        conversation: Conversation,
        snapshot: Sequence[Message],
        stretches: Sequence[tuple[int, int]],
        message: Message,
    ) -> bool:
        """Remove every work stretch and put `message` where the last one was; False, and
        nothing changed, if any stretch is no longer where it was."""
        located: list[tuple[int, int]] = []
        for start, end in stretches:
            ids = [m.id for m in snapshot[start:end]]
            try:
                position = conversation.index_of(ids[0])
            except ValueError:
                return False
            current = [m.id for m in conversation.messages[position : position + len(ids)]]
            if current != ids:
                return False
            located.append((position, position + len(ids)))
        for index, (start, end) in enumerate(reversed(located)):
            conversation.replace_range(start, end, [message] if index == 0 else [])
        return True


def _prior_summary(messages: Sequence[Message], start: int) -> str:
    """The latest summary before `start`, for continuity."""
    for position in range(start - 1, -1, -1):
        if messages[position].kind in (MessageKind.SUMMARY, MessageKind.GOAL_BATCH):
            return messages[position].content
    return ""
