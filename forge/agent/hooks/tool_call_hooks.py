"""Hooks around one tool call (docs/adr/0043): PreToolUse before the approval decision,
PostToolUse / PostToolUseFailure after the result. `forge.agent.turn.tool_calls.run_tool_call` calls
these; subagents' calls go through the same function, so they get hooks too.

PreToolUse's `updatedInput` is checked with the tool's own argument model
(`ToolRegistry.prepare`), exactly as a model's call is; the call is then rewritten — in the
conversation too, so the approval dialog, the recorded call and what the model reads next all
show what runs. An invalid rewrite is a tool error naming the hook. The hooks' decision meets
the approval policy's in `forge.agent.hooks.precedence.combine_permission`: read-only mode, a
refusal and the protected-config ask beat a hook's allow; a hook's deny beats every mode.

Loop-breaking tools (`task_completion`, `converse`, `ask_question`) are Forge's own turn
control, not actions: no hook runs for them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from forge.agent.events import AgentEvent, HookBlocked
from forge.agent.hooks.decisions import PreToolUseOutcome
from forge.agent.hooks.events import HookEvent
from forge.agent.hooks.precedence import (
    HookDecision,
    PolicyDecision,
    ToolPermission,
    combine_permission,
)
from forge.agent.hooks.session_hooks import SessionHooks, outcome_events
from forge.agent.tools.base import ToolError, ToolResult
from forge.agent.tools.registry import PreparedCall, ToolRegistry
from forge.context.conversation import Conversation
from forge.llm.messages import ToolCall

HOOK_REFUSAL_PREFIX = "Blocked by a PreToolUse hook"
"""How the model's result for a call a hook denied begins."""


@dataclass
class PreToolCheck:
    """What PreToolUse's hooks made of one call."""

    prepared: PreparedCall
    """The call to run: the model's, or the hook's rewrite (validated)."""
    decision: HookDecision | None = None
    reason: str = ""
    asker: str = ""
    """The hook that answered "ask" (its name), when one did."""
    error: str = ""
    """An invalid rewrite: the call fails with this text (naming the hook)."""
    events: list[AgentEvent] = field(default_factory=list)
    stop_reason: str | None = None
    """A hook said `continue: false`: the turn ends after this call."""


async def pre_tool_use(
    hooks: SessionHooks | None,
    prepared: PreparedCall,
    registry: ToolRegistry,
    conversation: Conversation,
) -> PreToolCheck | None:
    """Run PreToolUse for `prepared`; None when no hook listens (nothing changes)."""
    if hooks is None or not hooks.active(HookEvent.PRE_TOOL_USE):
        return None
    outcome = await hooks.hooks.pre_tool_use(
        hooks.info(), prepared.tool.name, prepared.arguments, tool_use_id=prepared.call.id
    )
    check = PreToolCheck(
        prepared,
        outcome.decision,
        outcome.reason,
        events=outcome_events(outcome, blocked=False),
        stop_reason=(outcome.stop_reason or "a PreToolUse hook stopped the turn")
        if outcome.stop
        else None,
    )
    if outcome.decision == "deny":
        check.events.insert(0, _denial(outcome))
        return check
    if outcome.decision == "ask":
        check.asker = next((r.run.hook.name for r in outcome.replies if r.permission == "ask"), "")
    if check.stop_reason is not None:  # `continue: false`: the call does not run either
        stopper = next(r.run.hook.name for r in outcome.replies if r.stop)
        check.events.insert(
            0, HookBlocked(HookEvent.PRE_TOOL_USE.value, stopper, check.stop_reason)
        )
        check.error = f"Stopped by a PreToolUse hook: {check.stop_reason}"
        return check
    if outcome.updated_input is not None:
        rewrite(check, outcome, registry, conversation)
    return check


def _denial(outcome: PreToolUseOutcome) -> HookBlocked:
    deniers = [r for r in outcome.replies if r.permission == "deny"]
    name = deniers[0].run.hook.name if deniers else "PreToolUse hook"
    return HookBlocked(HookEvent.PRE_TOOL_USE.value, name, outcome.reason or "(no reason given)")


def rewrite(
    check: PreToolCheck,
    outcome: PreToolUseOutcome,
    registry: ToolRegistry,
    conversation: Conversation,
) -> None:
    """Validate the hook's `updatedInput` as the model's call would be, and make it the call
    (in the conversation too); an invalid one becomes `check.error`."""
    assert outcome.updated_input is not None
    original = check.prepared.call
    arguments = dict(cast(Mapping[str, Any], outcome.updated_input))
    rewritten = ToolCall(original.id, original.name, json.dumps(arguments, ensure_ascii=False))
    rewriters = [r.run.hook.name for r in outcome.replies if r.updated_input is not None]
    name = rewriters[0] if rewriters else "a PreToolUse hook"
    try:
        check.prepared = registry.prepare(rewritten)
    except ToolError as error:
        check.error = f"the PreToolUse hook {name} rewrote the call's input invalidly: {error}"
        return
    record_rewritten_call(conversation, rewritten)


def record_rewritten_call(conversation: Conversation, call: ToolCall) -> None:
    """Put the rewritten `call` in place of the model's in the latest assistant message that
    holds it: the session file and the model's next request show what ran."""
    messages = conversation.messages
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role != "assistant" or not any(c.id == call.id for c in message.tool_calls):
            continue
        calls = tuple(call if c.id == call.id else c for c in message.tool_calls)
        conversation.replace_message(index, message.evolve(tool_calls=calls))
        return


def permission(
    policy: PolicyDecision, check: PreToolCheck | None, protected: str | None
) -> ToolPermission:
    """The final word on a call: the policy's alone without hooks, else combined with the
    hooks' (`combine_permission`: read-only, refusals and the protected ask come first)."""
    if check is None:
        return ToolPermission(policy, "policy")
    return combine_permission(policy, check.decision, hook_reason=check.reason, protected=protected)


def hook_refusal(decided: ToolPermission) -> ToolResult | None:
    """The result the model reads when a hook denied the call (None when it did not)."""
    if decided.decision != "refuse" or decided.decided_by != "hook":
        return None
    return ToolResult(
        f"{HOOK_REFUSAL_PREFIX}: {decided.reason}",
        is_error=True,
        metadata={"refused": True, "hook": True},
    )


@dataclass
class PostToolCheck:
    """What PostToolUse's hooks made of a call's result."""

    result: ToolResult
    events: list[AgentEvent]
    stop_reason: str | None = None


async def post_tool_use(
    hooks: SessionHooks | None, prepared: PreparedCall | None, result: ToolResult
) -> PostToolCheck | None:
    """PostToolUse after a call that ran and succeeded, PostToolUseFailure after one that
    ran and failed: a hook's feedback (exit 2, `decision: block`) and `additionalContext` are
    added to the result the model reads. None when no hook listens."""
    failed = result.is_error
    event = HookEvent.POST_TOOL_USE_FAILURE if failed else HookEvent.POST_TOOL_USE
    if hooks is None or prepared is None or not hooks.active(event):
        return None
    outcome = await hooks.hooks.post_tool_use(
        hooks.info(),
        prepared.tool.name,
        prepared.arguments,
        tool_response=None if failed else result.content,
        error=(result.content or "the call failed") if failed else "",
        tool_use_id=prepared.call.id,
    )
    content = result.content
    if outcome.feedback:
        content += f"\n\n[{event.value} hook feedback]\n{outcome.feedback}"
    if outcome.context:
        content += f"\n\n[{event.value} hook context]\n{outcome.context}"
    stop = (
        (outcome.stop_reason or f"a {event.value} hook stopped the turn") if outcome.stop else None
    )
    changed = dataclasses.replace(result, content=content) if content != result.content else result
    return PostToolCheck(changed, outcome_events(outcome), stop)


def approval_notification(
    hooks: SessionHooks | None, summary: str
) -> asyncio.Future[list[AgentEvent]] | None:
    """Notification hooks (`permission_prompt`) started beside an approval dialog, so the
    dialog does not wait for them; None when none listens."""
    if hooks is None or not hooks.active(HookEvent.NOTIFICATION):
        return None
    return asyncio.ensure_future(
        hooks.notify(f"Forge needs your approval: {summary}", "permission_prompt")
    )
