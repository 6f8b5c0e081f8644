"""The hooks of one session: `Hooks.load(...)` once (and again after a trust decision or a
change of a hooks file), then `hooks.active(event)` — cheap, so a session without hooks pays
nothing — and `await hooks.run(event, payload)` where the event happens (docs/adr/0043).

User hooks always run unless `hooks.disabled`; a workspace file's hooks run only when
`WorkspaceTrust.permits` its definitions as they are at load time (docs/adr/0034), so a
changed file is not run until it is trusted again.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from forge.agent.hooks.config import (
    HookCommand,
    HookFile,
    MatcherGroup,
    project_hooks,
    user_hooks,
)
from forge.agent.hooks.decisions import (
    HookOutcome,
    PostToolUseOutcome,
    PreToolUseOutcome,
    PromptOutcome,
    StopOutcome,
    aggregate,
)
from forge.agent.hooks.events import MATCHED_FIELD, TOOL_EVENTS, HookEvent
from forge.agent.hooks.matching import forge_arguments, matches, tool_names
from forge.agent.hooks.payloads import HookSession, prompt_payload, stop_payload, tool_payload
from forge.agent.hooks.runner import OUTPUT_CAP_BYTES, run_hooks
from forge.agent.trust.gate import WorkspaceTrust
from forge.config.paths import config_path
from forge.config.settings import Settings

logger = logging.getLogger(__name__)

HookState = Literal["active", "not trusted", "disabled"]


@dataclass(frozen=True, slots=True)
class ListedHook:
    """One configured hook as `/hooks` shows it."""

    event: HookEvent
    matcher: str
    command: str
    origin: str
    state: HookState


class Hooks:
    """The hooks that may run in one session, grouped by event."""

    def __init__(
        self,
        workspace: Path,
        files: Sequence[HookFile] = (),
        *,
        untrusted: Sequence[HookFile] = (),
        disabled: bool = False,
        output_cap: int = OUTPUT_CAP_BYTES,
        trust: WorkspaceTrust | None = None,
    ) -> None:
        """`files` run; `untrusted` are listed but never run; `disabled` runs nothing.
        `trust`: asked again before each run of a workspace file's hooks, so a script they
        name that changed since (`forge.agent.trust.scripts`) does not run."""
        self.workspace = workspace
        self.trust = trust
        self.files = tuple(files)
        self.untrusted = tuple(untrusted)
        self.disabled = disabled
        self.output_cap = output_cap
        self._groups: dict[HookEvent, tuple[MatcherGroup, ...]] = {}
        if not disabled:
            for hook_file in self.files:
                for group in hook_file.groups:
                    self._groups[group.event] = (*self._groups.get(group.event, ()), group)

    @classmethod
    def load(
        cls,
        settings: Settings,
        workspace: Path,
        trust: WorkspaceTrust | None,
        *,
        no_hooks: bool = False,
    ) -> Hooks:
        """The hooks of the user's config and of `workspace`'s files, each workspace file
        kept only when `trust` permits it (None: no workspace file runs). `no_hooks`
        (`forge run --no-hooks`) or `settings.hooks.disabled` run none."""
        workspace = workspace.expanduser().resolve()
        user = user_hooks(settings.hooks, str(config_path()))
        trusted: list[HookFile] = []
        untrusted: list[HookFile] = []
        for hook_file in project_hooks(workspace):
            permitted = trust is not None and trust.permits(hook_file.source)
            (trusted if permitted or not hook_file.groups else untrusted).append(hook_file)
        disabled = no_hooks or settings.hooks.disabled
        return cls(workspace, [user, *trusted], untrusted=untrusted, disabled=disabled, trust=trust)

    @property
    def warnings(self) -> list[str]:
        """Every problem of the hook files, and each workspace file not run for want of trust."""
        problems = [w for hook_file in (*self.files, *self.untrusted) for w in hook_file.warnings]
        problems += [
            f"hooks of {hook_file.origin} not run: this workspace is not trusted "
            "(see /trust or `forge trust`)"
            for hook_file in self.untrusted
        ]
        return problems

    def active(self, event: HookEvent) -> bool:
        """Whether any hook may run for `event` (a dictionary lookup)."""
        return event in self._groups

    def listing(self) -> list[ListedHook]:
        """Every configured hook with its source and whether it runs, in config order."""
        listed = []
        for hook_file in (*self.files, *self.untrusted):
            state: HookState = "disabled" if self.disabled else "active"
            if hook_file in self.untrusted:
                state = "not trusted"
            for group in hook_file.groups:
                for hook in group.commands:
                    listed.append(
                        ListedHook(group.event, group.matcher, hook.command, hook.origin, state)
                    )
        return listed

    def matching(self, event: HookEvent, payload: Mapping[str, Any]) -> list[MatcherGroup]:
        """The groups of `event` whose matcher matches `payload` (its tool under every name,
        or its source / trigger / notification type)."""
        groups = self._groups.get(event, ())
        if event in TOOL_EVENTS:
            name = payload.get("forge_tool_name") or payload.get("tool_name") or ""
            subject: tuple[str, ...] | str = tool_names(str(name))
        elif event in MATCHED_FIELD:
            subject = str(payload.get(MATCHED_FIELD[event], ""))
        else:
            return list(groups)
        return [group for group in groups if matches(group.pattern, subject)]

    async def run(self, event: HookEvent, payload: Mapping[str, Any]) -> HookOutcome:
        """Run the hooks of `event` that match `payload` (the JSON they get on stdin, built
        with `forge.agent.hooks.payloads`), in parallel; their aggregated outcome, typed for
        the event (`PreToolUseOutcome`, `PostToolUseOutcome`, `PromptOutcome`,
        `StopOutcome`, else `HookOutcome`). Never raises for a hook's failure."""
        commands = [hook for group in self.matching(event, payload) for hook in group.commands]
        commands = self._still_trusted(commands)
        if not commands:
            return aggregate(event, [])
        stdin = json.dumps(payload, default=str).encode("utf-8")
        runs = await run_hooks(commands, stdin, self.workspace, output_cap=self.output_cap)
        return aggregate(event, runs)

    def _still_trusted(self, commands: list[HookCommand]) -> list[HookCommand]:
        """`commands` less those of a workspace file that trust no longer permits: its
        definitions or a script they name changed since it was trusted (issue 34)."""
        if self.trust is None or not any(hook.project for hook in commands):
            return commands
        files = {hook_file.origin: hook_file for hook_file in self.files if hook_file.project}
        permitted = {
            origin: self.trust.permits(hook_file.source) for origin, hook_file in files.items()
        }
        kept = [hook for hook in commands if not hook.project or permitted.get(hook.origin)]
        for origin in sorted({h.origin for h in commands if h not in kept}):
            logger.warning("hooks of %s not run: changed since the workspace trusted them", origin)
        return kept

    # --- typed shortcuts for the loop ------------------------------------------------------
    async def pre_tool_use(
        self,
        session: HookSession,
        tool_name: str,
        arguments: Mapping[str, Any],
        *,
        tool_use_id: str = "",
    ) -> PreToolUseOutcome:
        """PreToolUse for one call (`tool_use_id`: its id); `updated_input` comes back as
        Forge's arguments (still to be validated by the caller against the tool's argument
        model)."""
        payload = tool_payload(
            session, HookEvent.PRE_TOOL_USE, tool_name, arguments, tool_use_id=tool_use_id
        )
        outcome = cast(PreToolUseOutcome, await self.run(HookEvent.PRE_TOOL_USE, payload))
        if outcome.updated_input is None:
            return outcome
        rewritten = forge_arguments(tool_name, arguments, outcome.updated_input, self.workspace)
        return dataclasses.replace(outcome, updated_input=rewritten)

    async def post_tool_use(
        self,
        session: HookSession,
        tool_name: str,
        arguments: Mapping[str, Any],
        *,
        tool_response: Any = None,
        error: str = "",
        tool_use_id: str = "",
    ) -> PostToolUseOutcome:
        """PostToolUse after a call that succeeded, PostToolUseFailure (with `error`) after
        one that failed; `tool_use_id`: the call's id."""
        event = HookEvent.POST_TOOL_USE_FAILURE if error else HookEvent.POST_TOOL_USE
        payload = tool_payload(
            session,
            event,
            tool_name,
            arguments,
            tool_response=tool_response,
            error=error,
            tool_use_id=tool_use_id,
        )
        return cast(PostToolUseOutcome, await self.run(event, payload))

    async def user_prompt_submit(self, session: HookSession, prompt: str) -> PromptOutcome:
        """UserPromptSubmit before `prompt` is sent."""
        payload = prompt_payload(session, prompt)
        return cast(PromptOutcome, await self.run(HookEvent.USER_PROMPT_SUBMIT, payload))

    async def stop(
        self,
        session: HookSession,
        last_assistant_message: str,
        *,
        stop_hook_active: bool,
        subagent: bool = False,
    ) -> StopOutcome:
        """Stop when the agent would end its turn, SubagentStop when a child (a `task` call)
        would (cap with `StopContinuations`)."""
        payload = stop_payload(
            session, last_assistant_message, stop_hook_active=stop_hook_active, subagent=subagent
        )
        event = HookEvent.SUBAGENT_STOP if subagent else HookEvent.STOP
        return cast(StopOutcome, await self.run(event, payload))
