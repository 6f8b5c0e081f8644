"""A session's hooks as the turn uses them (docs/adr/0043): the loaded `Hooks`, what every
hook input says about the session, and each outcome turned into the events a client shows.

The session builds one `SessionHooks` (`forge.session.build`) and puts it in `AgentParts`, so
the agent's tool calls (`forge.agent.hooks.tool_call_hooks`), its Stop and compaction
(`forge.agent.hooks.turn_hooks`) and the session's prompt, start and end reach the same hooks; a
settings change or a trust decision replaces `hooks` in place (`reload`).

`active(event)` is a dictionary lookup: a session without hooks pays nothing more.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge.agent.events import AgentEvent, HookBlocked, HookOutput, HookWarning
from forge.agent.hooks.decisions import HookOutcome
from forge.agent.hooks.engine import Hooks
from forge.agent.hooks.events import HookEvent
from forge.agent.hooks.payloads import HookSession
from forge.agent.trust.gate import WorkspaceTrust
from forge.config.settings import Settings

logger = logging.getLogger(__name__)


@dataclass
class SessionHooks:
    """The hooks of one running session and the session's side of their input."""

    hooks: Hooks
    session_id: str
    transcript_path: str
    workspace: Path
    mode: Callable[[], str] = lambda: "ask"
    """The permission mode now (Forge's spelling); read at each event."""
    resumed: bool = False
    """The session was resumed (SessionStart's source is then "resume")."""
    no_hooks: bool = False
    """`forge run --no-hooks`: a reload loads none either."""
    pending_context: list[str] = field(default_factory=list)
    """SessionStart's `additionalContext`, sent with the next prompt."""
    pending_notices: list[AgentEvent] = field(default_factory=list)
    """SessionStart's cards (shown as they came), recorded with the next prompt so that a
    resumed chat shows them too (docs/adr/0048)."""
    subagent: bool = False
    """The hooks as a child agent (a `task` call) sees them: its end is SubagentStop."""
    _start: asyncio.Future[list[AgentEvent]] | None = field(default=None, init=False, repr=False)
    _started: tuple[str, set[str]] | None = field(default=None, init=False, repr=False)
    """SessionStart's source and the hook files it ran for, until the first prompt (None
    after it, or when it never started)."""

    def info(self) -> HookSession:
        """What every hook input carries about the session, as it is now."""
        return HookSession(self.session_id, self.transcript_path, self.workspace, self.mode())

    def active(self, event: HookEvent) -> bool:
        """Whether any hook may run for `event`."""
        return self.hooks.active(event)

    @property
    def stop_event(self) -> HookEvent:
        """The event of the agent's end: Stop, or SubagentStop for a child."""
        return HookEvent.SUBAGENT_STOP if self.subagent else HookEvent.STOP

    def for_subagent(self) -> SessionHooks:
        """The same hooks for a child agent: its tool calls run PreToolUse/PostToolUse as the
        parent's do, and its end runs SubagentStop instead of Stop."""
        return SessionHooks(
            self.hooks,
            self.session_id,
            self.transcript_path,
            self.workspace,
            mode=self.mode,
            resumed=self.resumed,
            no_hooks=self.no_hooks,
            subagent=True,
        )

    def reload(self, settings: Settings, trust: WorkspaceTrust | None) -> None:
        """Load the hooks again (settings changed, trust decided): from the next event on,
        what `settings` and the workspace's files, as trusted now, define."""
        self.hooks = Hooks.load(settings, self.workspace, trust, no_hooks=self.no_hooks)

    def problems(self) -> list[str]:
        """Each problem of the hook files (parse errors, bad entries; not "not trusted",
        which the trust dialog and `forge run`'s warning say)."""
        files = (*self.hooks.files, *self.hooks.untrusted)
        return [warning for hook_file in files for warning in hook_file.warnings]

    async def run(self, event: HookEvent, payload: Mapping[str, Any]) -> HookOutcome:
        """Run `event`'s matching hooks; never raises for a hook's failure."""
        return await self.hooks.run(event, payload)

    # --- SessionStart ------------------------------------------------------------------------
    def start(self, source: str | None = None) -> asyncio.Future[list[AgentEvent]] | None:
        """Start SessionStart's hooks now (`source`: startup, resume or clear; by default
        startup, or resume for a resumed session); their context waits for the next prompt,
        which waits for them. None when no hook listens."""
        chosen = source or ("resume" if self.resumed else "startup")
        self._started = (chosen, {hook_file.origin for hook_file in self.hooks.files})
        if not self.active(HookEvent.SESSION_START):
            return None
        self._start = asyncio.ensure_future(self._session_start(chosen, self.hooks))
        return self._start

    def start_trusted(self) -> asyncio.Future[list[AgentEvent]] | None:
        """After the workspace was trusted, before the first prompt: SessionStart for the
        project's hook files that were not trusted when the session started (the others'
        already ran); the next prompt waits for them too. None when there are none."""
        if self._started is None:
            return None
        source, ran = self._started
        new = [f for f in self.hooks.files if f.origin not in ran]
        ran.update(f.origin for f in new)
        hooks = Hooks(self.workspace, new, disabled=self.hooks.disabled, trust=self.hooks.trust)
        if not hooks.active(HookEvent.SESSION_START):
            return None
        before = self._start
        self._start = asyncio.ensure_future(self._session_start(source, hooks, after=before))
        return self._start

    async def _session_start(
        self,
        source: str,
        hooks: Hooks,
        after: asyncio.Future[list[AgentEvent]] | None = None,
    ) -> list[AgentEvent]:
        from forge.agent.hooks.payloads import session_start_payload

        if after is not None and not after.done():
            await asyncio.wait([after])  # its context goes first; its events are its caller's
        payload = session_start_payload(self.info(), source)  # type: ignore[arg-type]
        outcome = await hooks.run(HookEvent.SESSION_START, payload)
        if outcome.context:
            self.pending_context.append(outcome.context)
        events = outcome_events(outcome)
        self.pending_notices.extend(events)
        return events

    async def started(self) -> None:
        """Wait for SessionStart's hooks if they run still (the next prompt needs their
        context); whoever called `start` shows their events."""
        start, self._start = self._start, None
        if start is not None and not start.done():
            await asyncio.shield(start)

    def prompted(self) -> None:
        """The first prompt is on its way: a trust answered from now on starts no
        SessionStart hooks (the session has started)."""
        self._started = None

    def take_context(self) -> str:
        """The SessionStart context not yet sent (once)."""
        context = "\n\n".join(self.pending_context)
        self.pending_context.clear()
        return context

    # --- SessionEnd --------------------------------------------------------------------------
    async def end(self, reason: str) -> None:
        """SessionEnd (`reason`: exit, clear, other). Nobody is left to show its output: it
        goes to the log. A SessionStart still running is cancelled (its process group
        killed)."""
        start, self._start = self._start, None
        if start is not None and not start.done():
            start.cancel()
        if not self.active(HookEvent.SESSION_END):
            return
        from forge.agent.hooks.payloads import session_end_payload

        outcome = await self.run(HookEvent.SESSION_END, session_end_payload(self.info(), reason))
        for warning in outcome.warnings:
            logger.warning("SessionEnd: %s", warning)
        for message in outcome.messages:
            logger.info("SessionEnd hook %s", message)

    # --- Notification ------------------------------------------------------------------------
    async def notify(self, message: str, notification_type: str) -> list[AgentEvent]:
        """Notification (`permission_prompt` or `idle_prompt`); its events."""
        if not self.active(HookEvent.NOTIFICATION):
            return []
        from forge.agent.hooks.payloads import notification_payload

        payload = notification_payload(self.info(), message, notification_type)
        return outcome_events(await self.run(HookEvent.NOTIFICATION, payload))


def outcome_events(outcome: HookOutcome, *, blocked: bool = True) -> list[AgentEvent]:
    """What the client shows of `outcome`: each blocking hook with its reason (`blocked`),
    each hook's text, each warning."""
    event = outcome.event.value
    events: list[AgentEvent] = []
    if blocked:
        for reply in outcome.replies:
            if reply.blocked:
                reason = reply.reason or "(no reason given)"
                events.append(HookBlocked(event, reply.run.hook.name, reason))
    events.extend(HookOutput(event, message.hook, message.text) for message in outcome.messages)
    events.extend(HookWarning(event, warning) for warning in outcome.warnings)
    return events


def with_context(text: str, context: str, source: str) -> str:
    """`text` with a hook's `context` after it, marked as what `source` added."""
    if not context.strip():
        return text
    return f'{text}\n\n<hook-context source="{source}">\n{context.strip()}\n</hook-context>'


@dataclass
class PromptCheck:
    """What UserPromptSubmit's hooks (and a waiting SessionStart context) made of a prompt."""

    blocked: bool = False
    reason: str = ""
    """Why it was not sent (for the user)."""
    context: str = ""
    """Text for the model, sent after the prompt (SessionStart's, then UserPromptSubmit's)."""
    events: list[AgentEvent] = field(default_factory=list)
    started: list[AgentEvent] = field(default_factory=list)
    """SessionStart's notices, shown when it ran: recorded on this prompt's message."""


async def submit_prompt(hooks: SessionHooks | None, prompt: str) -> PromptCheck:
    """Wait for SessionStart's hooks, then run UserPromptSubmit's for `prompt`. A block (exit
    2, `decision: "block"`, `continue: false`) keeps the prompt out of the conversation (and
    SessionStart's context waits for the next prompt)."""
    if hooks is None:
        return PromptCheck()
    await hooks.started()
    hooks.prompted()
    started = hooks.take_context()
    started_notices, hooks.pending_notices = hooks.pending_notices, []
    prompt_context = ""
    events: list[AgentEvent] = []
    if hooks.active(HookEvent.USER_PROMPT_SUBMIT):
        outcome = await hooks.hooks.user_prompt_submit(hooks.info(), prompt)
        events = outcome_events(outcome)
        if outcome.blocked or outcome.stop:
            reason = outcome.reason or outcome.stop_reason or "a UserPromptSubmit hook said no"
            if not outcome.blocked:  # `continue: false` alone: say who stopped it
                stopper = next(r.run.hook.name for r in outcome.replies if r.stop)
                events.insert(0, HookBlocked(HookEvent.USER_PROMPT_SUBMIT.value, stopper, reason))
            if started:
                hooks.pending_context.insert(0, started)
            hooks.pending_notices[:0] = started_notices  # they wait for the next prompt too
            return PromptCheck(True, reason, "", events)
        prompt_context = outcome.context
    context = with_context("", started, "SessionStart") + with_context(
        "", prompt_context, "UserPromptSubmit"
    )
    return PromptCheck(False, "", context.strip(), events, started_notices)
