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

from forge.context.conversation import Conversation, tool_group_end
from forge.context.errors import SummarizationError, SummarizationSkipped
from forge.context.groups import (
    Turn,
    is_instruction,
    is_pinned,
)
from forge.context.ledger import collect_ledger
from forge.context.prompts import ContentType
from forge.context.rewrite_gate import RewriteGate, rewritten_from
from forge.context.strategies.base import (
    StrategyServices,
    SummarizationStrategy,
    prior_summary_before,
)
from forge.context.strategies.contract import Capabilities, StrategyRun
from forge.context.strategies.cooldown import Cooldown
from forge.context.strategies.deterministic import AppendCursor
from forge.context.transcript import render_messages
from forge.llm.errors import LLMError
from forge.llm.messages import Message, MessageKind
from forge.llm.protocols import Provider

SUMMARY_REQUEST_COST = 2.0
"""What summarizing one token of work costs, in input-price tokens: the token sent once
(1.0) plus a quarter of a token written back at an output price about 4 x the input price
(docs/adr/0050 §3)."""

MINIMUM_WORK_TOKENS = 150
"""A turn whose work is smaller than this is not worth a goal-batch request."""


class GoalBatchCompactionStrategy(SummarizationStrategy):
    """Compacts the work of the oldest finished turns into one goal message."""

    name = "goal_batch"
    capabilities = Capabilities(uses_llm=True, forceable=False)

    def __init__(self, services: StrategyServices) -> None:
        super().__init__(services)
        self.cooldown = Cooldown()
        """Batches (keyed by their last message's id) that failed or would not help."""
        self._cursor = AppendCursor(relevant=_shapes_turns)
        self._quiet_until: int | None = None
        """While only plain messages arrive, no batch can form before this length."""
        self._examined = AppendCursor(relevant=_shapes_turns)
        self._frontier = 0
        """Index (among the user-turn starts) of the first turn that may still join a batch."""
        self._scan_index = 0
        self._scan_run: list[Turn] = []
        """Where the last look stopped, and the run of old finished turns it had found."""
        self._turns: dict[str, tuple[int, str, bool, int]] = {}
        """Closed turns by their first message's id: (length, last message's id, finished,
        work tokens)."""
        self._gate = RewriteGate()
        """What keeping an eligible batch has cost under the cache prices (ski rental)."""
        self._requests = 0
        """Assistant messages seen: the requests made so far."""

    def eligible_turns(self, conversation: Conversation) -> list[Turn]:
        """The oldest run of consecutive eligible finished turns (at most the maximum), or []
        when that batch is waiting after a failure or would not help.

        Incremental: each closed turn is examined once (its end, whether it finished, how much
        work it holds are cached by its first message's id), and turns before `_frontier` —
        closed turns that can never join a batch, and those before them — are not looked at
        again until the list changes other than by appends."""
        settings = self.settings
        restarted, _ = self._examined.new_messages(conversation)
        if restarted:
            self._frontier = 0
            self._scan_index, self._scan_run = 0, []
        positions = self.services.tally(conversation).user_positions()
        length = len(conversation)
        run = self._scan_run
        for index in range(self._scan_index, len(positions) - 1):  # the latest turn never joins
            if len(run) >= settings.goal_batch_max_turns:
                break
            start = positions[index]
            turn, complete, work = self._closed_turn(conversation, start, positions[index + 1])
            if (
                not complete
                or work < MINIMUM_WORK_TOKENS
                or self.cooldown.given_up(conversation[turn.end - 1].id)
            ):
                if len(run) >= settings.goal_batch_min_turns:
                    break
                # Nothing up to here can ever join a batch: every turn before was old already.
                run = []
                self._frontier = self._scan_index = index + 1
                continue
            if length - turn.end <= settings.goal_batch_age:
                break  # later turns are younger still; look again from here next time
            run.append(turn)
            self._scan_index = index + 1
        self._scan_run = run
        if len(run) < settings.goal_batch_min_turns:
            return []
        batch = run[: settings.goal_batch_max_turns]
        if self.cooldown.waiting(conversation[batch[-1].end - 1].id, length):
            return []
        return batch

    def _closed_turn(
        self, conversation: Conversation, start: int, end: int
    ) -> tuple[Turn, bool, int]:
        """The closed turn [start, end) — up to the next user instruction, observations and
        earlier summaries included —, whether it finished, and its work's tokens."""
        key = conversation[start].id
        known = self._turns.get(key)
        if known is not None:
            length, last_id, complete, work = known
            if start + length == end and conversation[end - 1].id == last_id:
                # Still the same turn (an output masked inside it leaves `work` an upper bound).
                return Turn(start, end), complete, work
        messages = [conversation[position] for position in range(start, end)]
        turn = Turn(0, len(messages))
        complete = turn.is_complete(messages)
        counter = self.services.counter
        work = sum(
            counter.count_message(message)
            for a, b in self.work_stretches(messages, 0, len(messages))
            for message in messages[a:b]
        )
        self._turns[key] = (end - start, messages[-1].id, complete, work)
        return Turn(start, end), complete, work

    def work_stretches(
        self, messages: Sequence[Message], start: int, end: int
    ) -> list[tuple[int, int]]:
        """The [start, end) stretches of work in messages[start:end]: whole units, none
        holding a user message, a system message or an excluded tool's call (looks at
        messages[start:end] only)."""
        excluded = set(self.settings.excluded_tools)
        stretches: list[tuple[int, int]] = []
        position = start
        while position < end:
            unit_end = min(end, tool_group_end(messages, position))
            unit = messages[position:unit_end]
            kept = any(
                message.role == "system"
                or is_instruction(message)
                or is_pinned(message)
                or any(call.name in excluded for call in message.tool_calls)
                for message in unit
            )
            if not kept:
                if stretches and stretches[-1][1] == position:
                    stretches[-1] = (stretches[-1][0], unit_end)
                else:
                    stretches.append((position, unit_end))
            position = unit_end
        return stretches

    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """Enough old finished turns in a row. O(new) while nothing can change the answer: a
        batch can only appear when a closed turn ages past `goal_batch_age` (or a wait after
        a failure ends), or after a change other than an append."""
        restarted, fresh = self._cursor.new_messages(conversation)
        assistants = sum(message.role == "assistant" for message in fresh)
        self._requests = assistants if restarted else self._requests + assistants
        length = len(conversation)
        age = self.settings.goal_batch_age
        quiet = self._quiet_until
        if not restarted and quiet is not None:
            first_new = length - len(fresh)
            for offset, message in enumerate(fresh):
                if is_instruction(message):  # closes the turn before it, which ages from here
                    quiet = min(quiet, first_new + offset + age + 1)
            self._quiet_until = quiet
            if length < quiet:
                return False
        turns = self.eligible_turns(conversation)
        if turns:
            self._quiet_until = None
            return self._batch_pays(conversation, turns)
        positions = self.services.tally(conversation).user_positions()
        ageing = [end + age + 1 for end in positions[self._frontier + 1 :] if length - end <= age]
        self._quiet_until = min([*ageing, length + age])
        return False

    def _batch_pays(self, conversation: Conversation, turns: Sequence[Turn]) -> bool:
        """Whether compacting `turns` now pays under the model's cache prices (ski rental,
        `forge.context.rewrite_gate`): the summary is taken at the summarizer's default target,
        a quarter of the work. Only under breakpoint caching, where a batch (older than the
        cache's lookback by `goal_batch_age`) un-caches the whole prompt after the system
        prompt; the tail's count is then O(1)."""
        pricing = self.services.cache_pricing
        if not pricing.rewrites_wait:
            return True
        work = sum(self._turns[conversation[turn.start].id][3] for turn in turns)
        saved = work - work // 4
        counter = self.services.counter
        head = 1 if conversation[0].role == "system" else 0
        length = len(conversation)
        start = pricing.rewrite_start(turns[0].start, length, head)
        paid = rewritten_from(conversation, self.services.sent)
        if paid is not None and pricing.rewrite_start(paid, length, head) <= start:
            tail = saved  # the next request re-writes from there anyway: free
        elif pricing.lookback is None:
            tail = self.services.tally(conversation).tokens  # an upper bound, in O(1)
        else:
            before = sum(counter.count_message(conversation[i]) for i in range(start))
            tail = self.services.tally(conversation).tokens - before
        # The summary is a request of its own: the work in, a quarter of it out.
        extra = work * SUMMARY_REQUEST_COST
        return self._gate.pays(pricing, saved, tail, self._requests, extra)

    def pending_items(
        self, conversation: Conversation, max_tokens: int = 0, *, force: bool = False
    ) -> int:
        """Turns a run now would compact."""
        return len(self.eligible_turns(conversation))

    async def summarize_with(
        self, conversation: Conversation, provider: Provider, run: StrategyRun
    ) -> int:
        """Compact the eligible turns; returns how many turns were compacted."""
        messages = conversation.messages
        self.cooldown.forget_missing({message.id for message in messages})
        turns = self.eligible_turns(conversation)
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
                prior_summary=prior_summary_before(messages, start),
                instructions=run.instructions,
            )
        except (LLMError, SummarizationError):
            self.cooldown.failed(key, len(conversation), self.settings.goal_batch_age)
            self._scan_index, self._scan_run = self._frontier, []
            self.progress(run, 0, len(turns), failed=len(turns))
            raise
        self.progress(run, len(turns), len(turns))  # in turns, as pending_items counts
        tokens_before = self.tokens_of(work)
        ledger = collect_ledger(work)
        header = f"[Summary of my work on the {len(turns)} requests above]"
        message = self.summary_of(
            work,
            result,
            f"{header}\n{result.text}",
            tokens_before=tokens_before,
            ledger=ledger,
            kind=MessageKind.GOAL_BATCH,
        )
        if int(message.meta["tokens_after"]) >= tokens_before:
            self.cooldown.unhelpful(key)
            self._scan_index, self._scan_run = self._frontier, []
            raise SummarizationSkipped("the goal batch would not reduce tokens")
        if not self._swap_stretches(conversation, messages, stretches, message):
            raise SummarizationSkipped("the conversation changed under the goal batch")
        self._gate.paid()
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


def _shapes_turns(message: Message) -> bool:
    """Whether replacing this message in place may change where turns start and end or
    whether they finished: an output masked or cut in place does not (a turn's cached work is
    then an upper bound)."""
    return message.role != "tool" and message.kind is not MessageKind.OBSERVATION
