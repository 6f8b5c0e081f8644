"""One tool call of a turn: approval, execution, the loop-breaking tools, and its result message.

`run_tool_call` is the agent loop's tool step. It reads the agent's settings through
`ToolCallHost` at call time (a settings change mid-turn applies to the next call), yields the
events the client sees (approval requests, questions, live output) and appends the call's result
to the conversation. A call that must end the turn (`task_completion`, `converse`, the circuit
breaker) sets `TurnState.finished`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from forge.agent.approvals import ApprovalPolicy
from forge.agent.events import (
    AgentEvent,
    ApprovalDecision,
    ApprovalRequested,
    ApprovalVerdict,
    QuestionAsked,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
    TurnFinished,
)
from forge.agent.hooks.session_hooks import SessionHooks
from forge.agent.hooks.tool_call_hooks import (
    approval_notification,
    hook_refusal,
    permission,
    post_tool_use,
    pre_tool_use,
)
from forge.agent.message_meta import with_notices
from forge.agent.modes import PermissionMode, refusal_text
from forge.agent.protected_paths import protected_write
from forge.agent.sandbox.approval import (
    confined_auto_allow,
    unconfined_refusal,
    unconfined_request,
)
from forge.agent.sandbox.sandbox import CommandSandbox
from forge.agent.tools.background import BackgroundCommands
from forge.agent.tools.base import FileChangeRecorder, ToolContext, ToolError, ToolResult
from forge.agent.tools.diffs import diff_stats
from forge.agent.tools.registry import PreparedCall, ToolRegistry
from forge.agent.turn.answers import NO_USER_ANSWER, DismissedError, answer_of
from forge.agent.turn.circuit_breaker import CircuitBreaker
from forge.agent.turn.event_pump import EventPump
from forge.agent.turn.turn_state import TurnState
from forge.context.conversation import Conversation
from forge.context.recall import RECALL_KEY_LENGTH, RECALL_TOOL
from forge.llm.messages import Message, ToolCall, new_message_id, tool_result

# The loop's logger: these records keep the name they had before this step left loop.py.
logger = logging.getLogger("forge.agent.turn.loop")


_FINISH_REASONS = {"task_completion": "completed", "converse": "answered"}
_FINAL_TEXT_KEYS = {"task_completion": "result", "converse": "message"}


class ToolCallHost(Protocol):
    """What a tool call needs from the agent running it (the `Agent` provides all of it)."""

    @property
    def conversation(self) -> Conversation:
        """The conversation the result is appended to."""
        ...

    @property
    def registry(self) -> ToolRegistry:
        """The tools the model may call."""
        ...

    @property
    def policy(self) -> ApprovalPolicy:
        """Which calls need the user's approval."""
        ...

    @property
    def workspace(self) -> Path:
        """The folder the tools are confined to."""
        ...

    @property
    def command_timeout(self) -> float:
        """Seconds a shell command may run."""
        ...

    @property
    def ask_user(self) -> bool:
        """Whether `ask_question` asks the user (False: answers `NO_USER_ANSWER`)."""
        ...

    @property
    def checkpoints(self) -> FileChangeRecorder | None:
        """Told around every file change (the checkpoint store), if any."""
        ...

    @property
    def hooks(self) -> SessionHooks | None:
        """The session's hooks (PreToolUse, PostToolUse, Notification), if any."""
        ...

    @property
    def sandbox(self) -> CommandSandbox | None:
        """The sandbox of the model's commands (docs/adr/0053), if any."""
        ...

    @property
    def refuse_images(self) -> Callable[[], str | None]:
        """Why the model is not sent images (`llm.vision`), or None when it is."""
        ...

    @property
    def background(self) -> BackgroundCommands | None:
        """The session's background commands (docs/adr/0057), if any."""
        ...


async def run_tool_call(
    host: ToolCallHost,
    call: ToolCall,
    turn: TurnState,
    pump: EventPump[AgentEvent],
    breaker: CircuitBreaker,
) -> AsyncGenerator[AgentEvent, None]:
    """Approve, run and record one call; sets `turn.finished` if the turn must end."""
    context = ToolContext(
        host.workspace,
        on_output=lambda text: pump.put(ToolOutputDelta(call.id, text)),
        command_timeout=host.command_timeout,
        changes=host.checkpoints,
        sandbox=host.sandbox,
        background=host.background,
    )
    try:
        prepared: PreparedCall | None = host.registry.prepare(call)
    except ToolError:
        prepared = None  # `execute` reports the same error as the call's result
    loop_breaking = prepared is not None and prepared.tool.loop_breaking
    hooked = (
        None
        if prepared is None or loop_breaking
        else await pre_tool_use(host.hooks, prepared, host.registry, host.conversation)
    )
    # The hook notices shown beside the call, recorded with its result (a resumed chat
    # shows them too; forge.agent.message_meta).
    notices: list[AgentEvent] = []
    if hooked is not None:  # PreToolUse ran: its notices, and maybe a rewritten call
        notices.extend(hooked.events)
        for event in hooked.events:
            yield event
        if hooked.error:  # an invalid rewrite, or `continue: false`
            failed = ToolResult(hooked.error, True)
            yield _record(host.conversation, call, failed, turn, breaker, notices)
            if hooked.stop_reason is not None:
                turn.finished = TurnFinished("hook_stopped", hooked.stop_reason)
            return
        prepared, call = hooked.prepared, hooked.prepared.call
    protected = (
        protected_write(prepared.tool.name, prepared.arguments, host.workspace)
        if prepared is not None
        else None
    )
    unconfined = unconfined_request(prepared, host.sandbox)
    if prepared is not None and unconfined is not None:
        sandbox_refusal = unconfined_refusal(host.sandbox, host.policy.mode)
        if sandbox_refusal:
            result = ToolResult(sandbox_refusal, is_error=True, metadata={"refused": True})
            yield _record(host.conversation, call, result, turn, breaker)
            return
        protected = protected or unconfined
        # Allowed without a dialog only in auto mode with tools.sandbox.allow_unconfined.
        context.unconfined_approved = host.policy.mode is PermissionMode.AUTO
    decided = permission(
        confined_auto_allow(
            host.policy.decide(call, prepared.tool, protected), prepared, host.sandbox, protected
        )
        if prepared is not None and not loop_breaking
        else "allow",
        hooked,
        protected,
    )
    decision_now = decided.decision
    if prepared is not None and decision_now == "refuse":
        refused = hook_refusal(decided) or ToolResult(
            refusal_text(prepared.tool), is_error=True, metadata={"refused": True}
        )
        yield _record(host.conversation, call, refused, turn, breaker, notices)
        return
    if prepared is not None and decision_now == "ask":
        refusal = prepared.tool.refusal(prepared.arguments, context)
        if refusal is not None:  # doomed whatever the user says: don't ask
            yield ToolCallStarted(call)
            result = ToolResult(refusal, is_error=True)
            yield _record(host.conversation, call, result, turn, breaker, notices)
            return
        decision: list[ApprovalDecision] = []
        asker = ("", "")
        if decided.decided_by == "hook" and hooked is not None:  # a hook asked: say which, why
            asker = (hooked.asker or "a PreToolUse hook", decided.reason)
        ask = _ask_approval(
            prepared, context, turn, decision, protected or "", host.hooks, asker=asker
        )
        async with aclosing(ask) as events:
            async for event in events:
                if not isinstance(event, ApprovalRequested):
                    notices.append(event)  # Notification hooks' (the request is no notice)
                yield event
        verdict, reason = decision[0].verdict, decision[0].reason.strip()
        if verdict is ApprovalVerdict.REJECT:
            if decision[0].unattended:
                text, meta = reason or "not allowed in this run", {"denied": True}
            else:
                text, meta = f"rejected by user: {reason or 'no reason given'}", {}
            result = ToolResult(text, is_error=True, metadata={"rejected": True, **meta})
            yield _record(host.conversation, call, result, turn, breaker, notices)
            return
        context.unconfined_approved = unconfined is not None
        if verdict is ApprovalVerdict.APPROVE_ALWAYS and not protected:
            # "Always" for a protected write approves this one: it never widens to the tool.
            host.policy.approve_always(call.name)
    yield ToolCallStarted(call)
    turn.running_call = call.id
    work = asyncio.ensure_future(host.registry.execute(call, context))
    async with aclosing(pump.while_running(work)) as events:
        async for event in events:
            yield event
    result = work.result()
    turn.running_call = None
    checked = None if loop_breaking else await post_tool_use(host.hooks, prepared, result)
    if checked is not None:  # PostToolUse(Failure) ran: its feedback goes with the result
        result = checked.result
        notices.extend(checked.events)
        for event in checked.events:
            yield event
    if checked is not None and checked.stop_reason is not None:  # `continue: false`
        turn.finished = TurnFinished("hook_stopped", checked.stop_reason)
    if loop_breaking and not result.is_error:
        if call.name == "ask_question":
            answer: list[str] = []
            async with aclosing(_ask_question(host.ask_user, result, turn, answer)) as events:
                async for event in events:
                    yield event
            result = ToolResult(answer[0], metadata=result.metadata)
        elif call.name in _FINISH_REASONS:
            final_text = str(result.metadata.get(_FINAL_TEXT_KEYS[call.name], result.content))
            turn.finished = TurnFinished(_FINISH_REASONS[call.name], final_text)
    if result.images and (refusal := host.refuse_images()) is not None:
        # Said in the result, never dropped silently (docs/adr/0055, part 2).
        note = f"[the image was not sent to the model: {refusal}]"
        result = replace(result, images=(), content=f"{result.content}\n{note}")
    yield _record(host.conversation, call, result, turn, breaker, notices)


def _record(
    conversation: Conversation,
    call: ToolCall,
    result: ToolResult,
    turn: TurnState,
    breaker: CircuitBreaker,
    notices: Sequence[AgentEvent] = (),
) -> ToolCallFinished:
    """Append the result (tripping the breaker on repeated errors), with the hook `notices`
    shown beside the call; the event to yield."""
    full_text = result.metadata.pop("full_text", None)
    if isinstance(full_text, str) and full_text:
        _record_condensed(conversation, call, result, full_text, notices)
    else:
        message = _result_message(call, result)
        if meta := with_notices(message.meta, notices):
            message = message.evolve(meta=meta)
        conversation.append(message)
    if breaker.record(call.name, result.content, is_error=result.is_error):
        logger.warning("circuit breaker: %d identical errors from %s", breaker.count, call.name)
        turn.finished = TurnFinished(
            "circuit_breaker",
            f"stopped after {breaker.count} identical errors from {call.name}",
        )
    return ToolCallFinished(
        call, result.content, result.is_error, result.exit_code, result.metadata
    )


async def _ask_approval(
    prepared: PreparedCall,
    context: ToolContext,
    turn: TurnState,
    decision: list[ApprovalDecision],
    protected: str = "",
    hooks: SessionHooks | None = None,
    *,
    asker: tuple[str, str] = ("", ""),
) -> AsyncGenerator[AgentEvent, None]:
    """Yield the request and put the client's answer in `decision` (a dismissed request
    counts as a rejection). `protected`: why the call must be asked about (Forge's config);
    `asker`: the hook that asked and its reason. Notification hooks run meanwhile; their
    notices follow the answer."""
    request = ApprovalRequested(
        call=prepared.call,
        summary=prepared.tool.describe(prepared.arguments),
        preview=prepared.tool.preview(prepared.arguments, context),
        protected=protected,
        asked_by=asker[0],
        ask_reason=asker[1],
    )
    notified = approval_notification(hooks, request.summary)
    turn.waiting_on = request.future
    yield request
    try:
        decision.append(await answer_of(request.future))
    except DismissedError:
        decision.append(
            ApprovalDecision(ApprovalVerdict.REJECT, "the approval request was dismissed")
        )
    except BaseException:
        if notified is not None:
            notified.cancel()  # the turn ends: its hooks' process groups are killed
        raise
    finally:
        turn.waiting_on = None
    if notified is not None:
        for event in await notified:
            yield event


async def _ask_question(
    ask_user: bool, result: ToolResult, turn: TurnState, answer: list[str]
) -> AsyncGenerator[AgentEvent, None]:
    """Ask the user (or not, when nobody can answer) and put the answer in `answer`."""
    if not ask_user:
        answer.append(NO_USER_ANSWER)
        return
    question = QuestionAsked(
        question=str(result.metadata.get("question", result.content)),
        suggestions=tuple(str(s) for s in result.metadata.get("suggestions") or ()),
    )
    turn.waiting_on = question.future
    yield question
    try:
        text = str(await answer_of(question.future)).strip()
    except DismissedError:
        text = ""
    finally:
        turn.waiting_on = None
    answer.append(text or "(the user gave no answer)")


def _record_condensed(
    conversation: Conversation,
    call: ToolCall,
    result: ToolResult,
    full_text: str,
    notices: Sequence[AgentEvent] = (),
) -> None:
    """A result condensed from a longer text (`web_fetch` with a prompt): the full text is
    appended first, so the session file keeps it as the original, then replaced by the
    condensed result, which names it for `recall` (as an ingest-capped output does)."""
    original = _result_message(call, ToolResult(full_text, metadata=result.metadata))
    conversation.append(original)
    condensed = _result_message(call, result)
    meta = {**condensed.meta, "capped": True, "characters_before": len(full_text)}
    meta = with_notices(meta, notices) or meta
    content = (
        f"{result.content}\n\n[the full text: {RECALL_TOOL} {original.id[:RECALL_KEY_LENGTH]}]"
    )
    conversation.replace_message(
        len(conversation) - 1,
        condensed.evolve(id=new_message_id(), content=content, replaces=(original.id,), meta=meta),
    )


KEPT_DIFF_CHARS = 64_000
"""An edit's diff up to this size is kept in its result message's meta (the session file),
for an editor to show it again on `session/load`; a larger one keeps its line counts only."""


def _result_message(call: ToolCall, result: ToolResult) -> Message:
    message = tool_result(call, result.content)
    if result.images:
        message = message.evolve(images=result.images)
    meta: dict[str, object] = {}
    if result.is_error or result.exit_code is not None:
        meta = {"is_error": result.is_error, "exit_code": result.exit_code}
    # It did not run (a rewind needs to know), and why: a hook's refusal ("hook") is not the
    # mode's (a resumed chat says which).
    for marker in ("rejected", "refused", "hook"):
        if result.metadata.get(marker):
            meta[marker] = True
    diff = result.metadata.get("diff")
    if isinstance(diff, str) and diff.strip():
        meta["diff_stats"] = list(diff_stats(diff))  # a resumed chat shows "+3 -1"
        path = result.metadata.get("path")
        if isinstance(path, str) and len(diff) <= KEPT_DIFF_CHARS:
            # An editor's `session/load` shows the edit again (docs/adr/0044); never sent.
            meta["diff"], meta["path"] = diff, path
    return message.evolve(meta=meta) if meta else message
