"""Hooks around a whole turn and around compaction (docs/adr/0043).

`around_turn` wraps the agent's turn (`Agent.run_turn`):
- **Stop**: when the turn would end with an answer (a plain answer, `converse`,
  `task_completion`), the Stop hooks run before the `TurnFinished` is passed on. A hook that
  blocks (exit 2, `decision: "block"`) has its reason appended as a user-side message and the
  turn goes on — at most `STOP_CONTINUATION_LIMIT` times a turn; `stop_hook_active` is true in
  the input once it went on. `continue: false` ends it whatever the others said.
- **PreCompact / PostCompact** (trigger `auto`) around each summarization the context manager
  starts by itself during the turn (its `SummarizationStarted` … `Completed`/`Failed` events);
  the manager is not changed: the hooks run as those events pass, the summarization meanwhile
  goes on in its own task. `/compact` is `around_compaction` (trigger `manual`).
- **Notification** (`idle_prompt`) as the turn ends, before its `TurnFinished`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing

from forge.agent.events import (
    AgentEvent,
    HookWarning,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationStarted,
    Trigger,
    TurnFinished,
)
from forge.agent.hooks.decisions import STOP_CONTINUATION_LIMIT, StopContinuations
from forge.agent.hooks.events import HookEvent
from forge.agent.hooks.payloads import CompactTrigger, compact_payload
from forge.agent.hooks.session_hooks import SessionHooks, outcome_events
from forge.agent.message_meta import (
    STOP_FEEDBACK_PREFIX,
    STOP_HOOK_NOTE,
    add_notices,
    with_notices,
)
from forge.agent.turn.turn_state import TurnState
from forge.context.conversation import Conversation
from forge.llm.messages import Message

STOP_ENDINGS = frozenset({"answered", "completed"})
"""The endings Stop hooks are asked about: the agent answered, not a limit or an error."""
TURN_EVENTS = (
    HookEvent.STOP,
    HookEvent.SUBAGENT_STOP,
    HookEvent.PRE_COMPACT,
    HookEvent.POST_COMPACT,
    HookEvent.NOTIFICATION,
)
"""The events `around_turn` runs hooks for (checked once, as the turn starts)."""
STOP_FEEDBACK = STOP_FEEDBACK_PREFIX + "{reason}"
"""The user-side message that carries a blocking Stop hook's reason to the model."""


async def around_turn(
    hooks: SessionHooks | None,
    conversation: Conversation,
    turn: TurnState,
    run: Callable[[], AsyncGenerator[AgentEvent, None]],
) -> AsyncGenerator[AgentEvent, None]:
    """The events of `run()` (the turn's loop), with Stop, automatic compaction's and the
    turn-ended Notification's hooks; `run` is called again when a Stop hook makes the turn
    go on."""
    if hooks is None or not any(hooks.active(event) for event in TURN_EVENTS):
        # No hook listens at the turn's moments: the loop's events pass as they are.
        async with aclosing(run()) as events:
            async for event in events:
                yield event
        return
    continuations = StopContinuations()
    while True:
        held: TurnFinished | None = None
        ended: list[AgentEvent] = []
        async with aclosing(run()) as events:
            async for event in _with_auto_compaction_hooks(hooks, events):
                if isinstance(event, TurnFinished):
                    held = event
                    continue
                yield event
        if held is None:
            return
        if held.reason in STOP_ENDINGS and hooks.active(hooks.stop_event):
            outcome = await hooks.hooks.stop(
                hooks.info(),
                held.final_text,
                stop_hook_active=continuations.stop_hook_active,
                subagent=hooks.subagent,
            )
            shown = outcome_events(outcome)
            for event in shown:
                yield event
            if not outcome.stop and continuations.go_on(outcome):
                # Forge's words, not the user's: a resumed chat shows the hook's card, and
                # `/rewind` does not list it as a turn (forge.agent.message_meta).
                meta = with_notices({"note": STOP_HOOK_NOTE}, shown)
                feedback = STOP_FEEDBACK.format(reason=outcome.reason)
                conversation.append(Message(role="user", content=feedback, meta=meta))
                turn.finished = None
                continue
            ended = list(shown)
            if outcome.go_on and not outcome.stop:
                limit = HookWarning(
                    hooks.stop_event.value,
                    f"Stop hooks kept the turn going {STOP_CONTINUATION_LIMIT} times; it ends now",
                )
                ended.append(limit)
                yield limit
        if not hooks.subagent:  # a child's end is not the user's turn ending
            notices = await hooks.notify(f"Forge finished the turn ({held.reason})", "idle_prompt")
            ended += notices
            for event in notices:
                yield event
        # The cards shown after the answer, recorded on it: a resumed chat shows them too.
        add_notices(conversation, ended)
        yield held
        return


async def _with_auto_compaction_hooks(
    hooks: SessionHooks, events: AsyncIterator[AgentEvent]
) -> AsyncGenerator[AgentEvent, None]:
    """`events`, with PreCompact after each automatic summarization's start and PostCompact
    after its end (nothing extra when neither event has hooks)."""
    running: set[str] = set()
    async for event in events:
        yield event
        if isinstance(event, SummarizationStarted) and event.trigger is not Trigger.MANUAL:
            running.add(event.run_id)
            for extra in await compact_hooks(hooks, "auto", after=False):
                yield extra
        elif (
            isinstance(event, SummarizationCompleted | SummarizationFailed)
            and event.run_id in running
        ):
            running.discard(event.run_id)
            for extra in await compact_hooks(hooks, "auto", after=True):
                yield extra


async def compact_hooks(
    hooks: SessionHooks | None, trigger: CompactTrigger, *, after: bool, instructions: str = ""
) -> list[AgentEvent]:
    """PreCompact (or PostCompact `after`) for `trigger`; their events."""
    event = HookEvent.POST_COMPACT if after else HookEvent.PRE_COMPACT
    if hooks is None or not hooks.active(event):
        return []
    payload = compact_payload(hooks.info(), trigger, after=after, instructions=instructions)
    return outcome_events(await hooks.run(event, payload))


async def around_compaction(
    hooks: SessionHooks | None,
    instructions: str,
    run: Callable[[], AsyncGenerator[AgentEvent, None]],
) -> AsyncGenerator[AgentEvent, None]:
    """`/compact`'s events between PreCompact's and PostCompact's (trigger `manual`)."""
    for event in await compact_hooks(hooks, "manual", after=False, instructions=instructions):
        yield event
    async with aclosing(run()) as events:
        async for event in events:
            yield event
    for event in await compact_hooks(hooks, "manual", after=True, instructions=instructions):
        yield event
