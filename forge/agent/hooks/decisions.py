"""What hooks said: each run's exit code and output read as Claude Code reads them, and the
runs of one event aggregated into one outcome the caller acts on (docs/adr/0043).

Per hook: exit 0 is no opinion — JSON on stdout may decide or add context, other text is
shown (for UserPromptSubmit and SessionStart it is context for the model, as in Claude
Code); exit 2 blocks (stderr is the reason); any other exit, a timeout or a failed start is a
warning and the action proceeds.

Several hooks: the first deny wins, then ask, then allow; contexts are joined; an
`updatedInput` is taken from one hook only (the first in config order; a second is a
warning); `continue: false` from any hook stops.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from forge.agent.hooks.events import HookEvent
from forge.agent.hooks.runner import HookRun

BLOCK_EXIT_CODE = 2
"""The exit code with which a hook blocks."""
STOP_CONTINUATION_LIMIT = 3
"""How many times per turn Stop hooks may make the turn go on."""

PermissionDecision = Literal["allow", "ask", "deny"]
_PERMISSION_ORDER: tuple[PermissionDecision, ...] = ("deny", "ask", "allow")
_LEGACY_DECISIONS: dict[str, PermissionDecision] = {"block": "deny", "approve": "allow"}
_TEXT_IS_CONTEXT = frozenset({HookEvent.USER_PROMPT_SUBMIT, HookEvent.SESSION_START})


@dataclass(frozen=True, slots=True)
class HookMessage:
    """Text a hook has for the user, with the hook's name (shown together in the chat)."""

    hook: str
    """`HookCommand.name`: its file and command."""
    text: str

    def __str__(self) -> str:
        return f"{self.hook}: {self.text}"


@dataclass(frozen=True)
class HookReply:
    """One hook's run, read."""

    run: HookRun
    blocked: bool = False
    """Exit 2, or a JSON `decision: "block"` / permission deny."""
    reason: str = ""
    """Why it blocked or decided (stderr for exit 2, else `reason`/`permissionDecisionReason`)."""
    permission: PermissionDecision | None = None
    updated_input: Mapping[str, Any] | None = None
    context: str = ""
    message: str = ""
    """Text for the user: `systemMessage`, or plain stdout."""
    stop: bool = False
    """`continue: false`."""
    stop_reason: str = ""
    warning: str = ""


@dataclass(frozen=True)
class HookOutcome:
    """What the hooks of one event said together. Every event's outcome has these."""

    event: HookEvent
    replies: tuple[HookReply, ...] = ()
    context: str = ""
    """Every hook's `additionalContext` (and, for UserPromptSubmit/SessionStart, plain
    stdout), joined with blank lines: text for the model."""
    messages: tuple[HookMessage, ...] = ()
    """Text to show the user, each with the hook's name."""
    warnings: tuple[str, ...] = ()
    """Hooks that failed, timed out, could not start, or disagreed; each names the hook."""
    stop: bool = False
    """A hook said `continue: false`: the turn ends after this step."""
    stop_reason: str = ""
    """Its `stopReason`, for the user."""

    @property
    def ran(self) -> bool:
        """Whether any hook ran."""
        return bool(self.replies)


@dataclass(frozen=True)
class PreToolUseOutcome(HookOutcome):
    """Before a tool call. Combine `decision` with the approval policy through
    `forge.agent.hooks.precedence.combine_permission`.

    `updated_input` is Forge's arguments for the call as a hook rewrote them, as
    `Hooks.pre_tool_use` returns it (`matching.forge_arguments`; from the generic `Hooks.run`
    it is the hook's object as written); the caller MUST validate it against the tool's argument
    model as it does a model's call (a bad rewrite is refused with that error), and the
    approval dialog must show the rewritten call."""

    decision: PermissionDecision | None = None
    """None: no hook had an opinion; the policy decides."""
    reason: str = ""
    """Why (the deny's stderr or reason, for the model; the ask's, for the dialog)."""
    updated_input: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class PostToolUseOutcome(HookOutcome):
    """After a tool call (or its failure): the call already happened; a block only tells the
    model something (`feedback`)."""

    blocked: bool = False
    feedback: str = ""
    """For the model, beside the tool's result."""


@dataclass(frozen=True)
class PromptOutcome(HookOutcome):
    """Before a prompt is sent: `blocked` means it is not sent (and `reason` says why, to the
    user); `context` goes with the prompt."""

    blocked: bool = False
    reason: str = ""


@dataclass(frozen=True)
class StopOutcome(HookOutcome):
    """When the agent would end its turn: `go_on` means a hook blocked the stop and `reason`
    is the model's next instruction. Use a `StopContinuations` to cap it."""

    go_on: bool = False
    reason: str = ""


def read_reply(event: HookEvent, run: HookRun) -> HookReply:
    """Read one run as Claude Code would."""
    name = run.hook.name
    if run.start_error:
        return HookReply(run, warning=f"hook {name} did not run: {run.start_error}")
    if run.timed_out:
        return HookReply(run, warning=f"hook {name} {run.stderr.strip()}")
    if run.exit_code == BLOCK_EXIT_CODE:
        reason = run.stderr.strip() or f"blocked by hook {name} (exit 2, no message)"
        return HookReply(run, blocked=True, reason=reason, permission="deny")
    if run.exit_code != 0:
        detail = run.stderr.strip() or run.stdout.strip()
        return HookReply(
            run,
            warning=f"hook {name} failed (exit {run.exit_code})"
            + (f": {detail}" if detail else ""),
        )
    data = _json_object(run.stdout)
    if data is None:
        text = run.stdout.strip()
        if event in _TEXT_IS_CONTEXT:
            return HookReply(run, context=text)
        return HookReply(run, message=text)
    return _read_json(event, run, data)


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _read_json(event: HookEvent, run: HookRun, data: Mapping[str, Any]) -> HookReply:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    warnings = []
    permission: PermissionDecision | None = None
    reason = _text(data.get("reason"))
    raw_permission = specific.get("permissionDecision")
    if event is not HookEvent.PRE_TOOL_USE:
        raw_permission = None  # only PreToolUse decides a permission
    if raw_permission in _PERMISSION_ORDER:
        permission = raw_permission
        reason = _text(specific.get("permissionDecisionReason")) or reason
    elif raw_permission is not None:
        warnings.append(f"permissionDecision {raw_permission!r} is not allow, deny or ask")
    decision = data.get("decision")
    blocked = decision == "block" or permission == "deny"
    if event is HookEvent.PRE_TOOL_USE and permission is None:
        # Claude Code's older spelling of a PreToolUse decision.
        permission = _LEGACY_DECISIONS.get(decision) if isinstance(decision, str) else None
    updated = specific.get("updatedInput", data.get("updatedInput"))
    if updated is not None and not isinstance(updated, dict):
        warnings.append("updatedInput is not an object; ignored")
        updated = None
    context = _text(specific.get("additionalContext")) or _text(data.get("additionalContext"))
    stop = data.get("continue") is False
    warning = f"hook {run.hook.name}: " + "; ".join(warnings) if warnings else ""
    return HookReply(
        run,
        blocked=blocked,
        reason=reason,
        permission=permission,
        updated_input=updated,
        context=context,
        message=_text(data.get("systemMessage")),
        stop=stop,
        stop_reason=_text(data.get("stopReason")),
        warning=warning,
    )


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def aggregate(event: HookEvent, runs: Sequence[HookRun]) -> HookOutcome:
    """The outcome of `event`'s runs (in config order), typed for the event."""
    replies = tuple(read_reply(event, run) for run in runs)
    common = _common(event, replies)
    if event is HookEvent.PRE_TOOL_USE:
        return _pre_tool_use(common, replies)
    blockers = [reply for reply in replies if reply.blocked]
    reason = "\n".join(reply.reason for reply in blockers if reply.reason)
    if event in (HookEvent.POST_TOOL_USE, HookEvent.POST_TOOL_USE_FAILURE):
        return PostToolUseOutcome(**common, blocked=bool(blockers), feedback=reason)
    if event is HookEvent.USER_PROMPT_SUBMIT:
        return PromptOutcome(**common, blocked=bool(blockers), reason=reason)
    if event in (HookEvent.STOP, HookEvent.SUBAGENT_STOP):
        return StopOutcome(**common, go_on=bool(blockers), reason=reason)
    # Other events cannot block: a block's stderr is shown to the user.
    shown = tuple(HookMessage(r.run.hook.name, r.reason) for r in blockers if r.reason)
    return HookOutcome(**{**common, "messages": common["messages"] + shown})


def _common(event: HookEvent, replies: Sequence[HookReply]) -> dict[str, Any]:
    stopping = [reply for reply in replies if reply.stop]
    return {
        "event": event,
        "replies": tuple(replies),
        "context": "\n\n".join(reply.context for reply in replies if reply.context),
        "messages": tuple(
            HookMessage(reply.run.hook.name, reply.message) for reply in replies if reply.message
        ),
        "warnings": tuple(reply.warning for reply in replies if reply.warning),
        "stop": bool(stopping),
        "stop_reason": "\n".join(reply.stop_reason for reply in stopping if reply.stop_reason),
    }


def _pre_tool_use(common: dict[str, Any], replies: Sequence[HookReply]) -> PreToolUseOutcome:
    decision: PermissionDecision | None = None
    reason = ""
    for candidate in _PERMISSION_ORDER:
        deciding = [reply for reply in replies if reply.permission == candidate]
        if deciding:
            decision, reason = candidate, deciding[0].reason
            break
    rewriting = [reply for reply in replies if reply.updated_input is not None]
    warnings = common.pop("warnings")
    if len(rewriting) > 1:
        used, ignored = rewriting[0].run.hook.name, [r.run.hook.name for r in rewriting[1:]]
        warnings += (
            f"several hooks rewrote the tool input; {used}'s rewrite is used, not "
            + ", ".join(ignored)
            + "'s",
        )
    updated = rewriting[0].updated_input if rewriting else None
    return PreToolUseOutcome(
        **common, warnings=warnings, decision=decision, reason=reason, updated_input=updated
    )


@dataclass
class StopContinuations:
    """Per turn: how often Stop hooks made the turn go on, capped at `limit` so two hooks that
    always block cannot loop forever. The loop keeps one per turn."""

    limit: int = STOP_CONTINUATION_LIMIT
    count: int = field(default=0)

    @property
    def stop_hook_active(self) -> bool:
        """The `stop_hook_active` field of the next Stop input: the turn already went on."""
        return self.count > 0

    def go_on(self, outcome: StopOutcome) -> bool:
        """Whether the turn goes on after `outcome` (counted); False once `limit` is used."""
        if not outcome.go_on or self.count >= self.limit:
            return False
        self.count += 1
        return True
