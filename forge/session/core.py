"""`Session`: the one owner of a running session's parts, and the verbs front ends use.

The TUI and `forge run` drive a session only through these verbs and views: `run_turn` (a
message, its `@` mentions expanded, on the session's model or one given for that turn),
`compact`, `plan_restore`/`restore`/`rewind_conversation`, `cost_report`, `context_report`,
`list_models`, `apply_settings`, `set_mode`, and the lifetime calls `start_background`,
`wait_for_mcp`, `aclose`. Build one with `forge.session.build.build_session`; see docs/adr/0041.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from forge.agent.approvals import ApprovalPolicy
from forge.agent.costs import CostLedger, CostReport
from forge.agent.events import HOOK_FILE_PROBLEM, AgentEvent, HookWarning, TurnFinished
from forge.agent.history.checkpoints import CheckpointStore
from forge.agent.history.rewind import SessionTurn, rewind_conversation, session_turns
from forge.agent.history.session_file import SessionLog, SessionStore
from forge.agent.mcp import McpServers
from forge.agent.modes import PermissionMode
from forge.agent.parts import AgentParts
from forge.agent.providers import AnyProvider, make_provider
from forge.agent.sandbox.sandbox import CommandSandbox, close_quietly
from forge.agent.tools.background import BackgroundCommands
from forge.agent.tools.base import ToolError
from forge.agent.tools.registry import ToolRegistry
from forge.agent.trust import WorkspaceTrust
from forge.agent.turn.loop import Agent
from forge.config.settings import McpServerSettings, Settings
from forge.context.manager import Manager
from forge.llm.messages import Message, ToolCall
from forge.llm.tokenizer import TiktokenCounter
from forge.llm.window_discovery import ContextWindow, WindowTracker
from forge.session.events import AttachmentsAdded, SessionEvent
from forge.session.parts import window_tokens
from forge.session.reports import ContextReport
from forge.session.restore import (
    PlannedRestore,
    RestoreResult,
    RewindPoint,
    plan_rewind,
    plan_undo,
    restore_files,
    rewind_points,
)
from forge.session.settings_apply import apply_settings

if TYPE_CHECKING:
    from forge.agent.input.mentions import Expansion
    from forge.agent.skills.catalog import SkillCatalog
    from forge.session.children import SessionChildren

logger = logging.getLogger(__name__)


@dataclass
class Session:
    """Everything one running session is made of. Build it with `build_session`.

    `parts` (provider, context manager, policy, command timeout) is the very object the
    agent reads: a settings switch replaces a part there, once (`apply_settings`).
    """

    settings: Settings
    workspace: Path
    parts: AgentParts
    counter: TiktokenCounter
    registry: ToolRegistry
    store: SessionStore
    log: SessionLog
    """The session file being written (its id, path, problems found on resume)."""
    agent: Agent
    window: WindowTracker | None = None
    """The model's context window and where it came from (shown by `/context`)."""
    mcp: McpServers | None = None
    """The session's MCP servers, whose ready tools the registry offers (`/mcp`)."""
    trust: WorkspaceTrust | None = None
    """Whether the workspace's own definitions may run (`/trust`; docs/adr/0034)."""
    summarization_provider: AnyProvider | None = None
    """The summarization server's provider when it is not the conversation's (docs/adr/0037)."""
    retired_providers: list[AnyProvider] = field(default_factory=list)
    """Providers replaced by a settings switch, closed by `aclose` (a turn may still use one)."""
    retired_windows: list[WindowTracker] = field(default_factory=list)
    children: SessionChildren | None = None
    """How a subagent's parts are made (follows the settings; docs/adr/0045)."""
    agent_problems: list[str] = field(default_factory=list)
    """Agent definition files that could not be used, one line each (file and field)."""
    skills: SkillCatalog | None = None
    """The session's skills and which are loaded (`/skills`, `/name`; docs/adr/0046)."""
    skill_notices: list[str] = field(default_factory=list)
    """What to tell the user once at start: skills left out (file and rule), clashes, a
    capped listing."""
    background_notices: list[str] = field(default_factory=list)
    """What to tell the user once at start: background commands a Forge that died left
    running (ended now), and those a resumed session had running (docs/adr/0057)."""

    def __post_init__(self) -> None:
        if self.window is not None:
            self.use_window(self.window)
        if self.mcp is not None:
            self.mcp.in_turn = lambda: self.turn_running

    # --- views -------------------------------------------------------------------------------
    @property
    def provider(self) -> AnyProvider:
        """The session's provider (what a turn without a model of its own talks to)."""
        return cast("AnyProvider", self.parts.provider)  # build_session put it there

    @property
    def context_manager(self) -> Manager:
        """The session's context manager."""
        return cast(Manager, self.parts.context_manager)  # build_session put it there

    @property
    def policy(self) -> ApprovalPolicy:
        """The session's approval policy (its mode is the permission mode)."""
        return self.parts.policy

    @property
    def sandbox(self) -> CommandSandbox | None:
        """The sandbox of the model's commands (docs/adr/0053); None once closed."""
        return self.parts.sandbox

    @property
    def background(self) -> BackgroundCommands | None:
        """The session's background commands (docs/adr/0057)."""
        return self.parts.background

    def move_command_to_background(self) -> str:
        """The running foreground command of the model goes on in the background (the
        user's key; its call answers at once with the id); "" when it will, else why not."""
        background = self.parts.background
        if background is None:
            return "background commands are not available in this session"
        return background.move_foreground()

    def end_background(self, reason: str = "exit") -> list[str]:
        """End every running background command (`reason`: exit, clear, a signal's name) and
        refuse new ones; one line per command ended, for the user. Blocks for their grace
        period: call it in a thread from an event loop."""
        background = self.parts.background
        if background is None:
            return []
        return [
            f"ended background command {entry.id} `{entry.command}` ({reason})"
            for entry in background.stop_all(reason)
        ]

    @property
    def session_id(self) -> str:
        """The id of the session being recorded."""
        return self.log.id

    @property
    def session_name(self) -> str:
        """The name given with /rename ("" when none)."""
        return str(self.log.header.get("name") or "")

    @property
    def forked_from(self) -> str:
        """The id of the session this one was forked from ("" when it was not)."""
        return str(self.log.header.get("forked_from") or "")

    def rename(self, name: str) -> None:
        """Name the session `name` (recorded in its file; lists and the header show it)."""
        self.log.record_name(name)

    @property
    def messages(self) -> Sequence[Message]:
        """The conversation, to show (a front end never changes it)."""
        return self.agent.conversation.messages

    @property
    def token_totals(self) -> tuple[int, int]:
        """Prompt and completion tokens of the agent's requests this session (a resumed
        one's included)."""
        return self.agent.session_prompt_tokens, self.agent.session_completion_tokens

    @property
    def summaries_disabled(self) -> bool:
        """Whether a permanent error turned LLM summaries off for the session (ADR 0024)."""
        return self.context_manager.breaker.disabled is not None

    @property
    def turn_running(self) -> bool:
        """Whether a turn (or a /compact run) is in progress."""
        return self.agent.turn_running

    @property
    def checkpoints(self) -> CheckpointStore | None:
        """The files' checkpoints (none with `forge run --ephemeral`; docs/adr/0027)."""
        store = self.agent.checkpoints
        return store if isinstance(store, CheckpointStore) else None

    @property
    def costs(self) -> CostLedger:
        """The session's tokens per model and kind of request (unpriced; see `cost_report`)."""
        return self.agent.costs

    @property
    def turn_llm_calls(self) -> int:
        """The agent's LLM requests in the current (or last) turn."""
        return self.agent.turn_llm_calls

    # --- turns -------------------------------------------------------------------------------
    def stop_when(self, check: Callable[[], str | None]) -> None:
        """Ask `check` before each LLM request of every turn; a reason it returns ends the
        turn with that reason (`forge run --max-budget-usd`)."""
        self.agent.stop_check = check

    def expand_mentions(self, text: str) -> Expansion:
        """`text` with its `@path` mentions attached, with the session's workspace, tokenizer
        and budget (docs/adr/0030). Reads files: call it in a thread."""
        from forge.agent.input.mentions import attachment_limit, expand_mentions

        limit = attachment_limit(
            self.settings.context.ingest_max_share, self.context_manager.max_tokens
        )
        return expand_mentions(text, self.workspace, counter=self.counter, limit_tokens=limit)

    async def run_turn(
        self, text: str, *, model: str | None = None, typed: str | None = None
    ) -> AsyncGenerator[SessionEvent, None]:
        """One turn for `text`: its `@` mentions are expanded first (in a thread; an
        `AttachmentsAdded` event comes first when there were any), then the agent's events.

        `model` (a custom command's) answers this turn only, on the session's server; the
        session's provider is never swapped, so the next turn uses the configured model
        however this one ends (an answer, an error, Esc). `typed`: what the user typed when
        `text` is what it expanded to (a skill or custom command); the session file keeps
        both, so a resumed chat shows what the user typed (docs/adr/0048)."""
        from forge.agent.hooks.session_hooks import submit_prompt
        from forge.agent.input.mentions import has_mentions
        from forge.agent.message_meta import EXPANSION_KEY, TYPED_KEY, with_notices
        from forge.unicode_repair import repaired

        text = repaired(text, "the user's message")  # an editor's or a paste's lone surrogate
        original = text
        prompt = await submit_prompt(self.parts.hooks, text)  # UserPromptSubmit (ADR 0043)
        for event in prompt.events:
            yield event
        if prompt.blocked:  # not sent, not added to the conversation
            yield TurnFinished("hook_blocked", prompt.reason)
            return
        if has_mentions(text):
            expansion = await asyncio.to_thread(self.expand_mentions, text)
            if expansion.attachments or expansion.problems:
                yield AttachmentsAdded(
                    tuple(attachment.describe() for attachment in expansion.attachments),
                    tuple(expansion.problems),
                )
            text = expansion.text
        asked = self._agent_request(text)
        # `@agent-NAME`: the first reply must call `task` (the instruction says with whom).
        required = "task" if asked != text else None
        text = asked
        if prompt.context:  # SessionStart's and UserPromptSubmit's, marked as theirs
            text = f"{text}\n\n{prompt.context}"
        if self.skills is not None:  # a summary took a loaded skill out: give it back
            from forge.agent.skills.loading import missing_from, reattached_text

            missing = missing_from(self.messages, self.skills.loaded(), sending=text)
            if missing:
                text = f"{reattached_text(missing)}\n\n{text}"
        meta = with_notices({}, prompt.events)  # UserPromptSubmit's cards, shown once resumed
        if typed is not None and typed != original:
            meta |= {TYPED_KEY: typed, EXPANSION_KEY: original}
        elif text != original:  # hook context, attachments, an `@agent-` request added
            meta[TYPED_KEY] = original
        if not model or model == self.settings.llm.model:
            async for event in self.agent.run_turn(text, required_tool=required, meta=meta):
                yield event
            return
        provider = make_provider(self.settings.llm.model_copy(update={"model": model}))
        try:
            turn = self.agent.run_turn(text, provider=provider, required_tool=required, meta=meta)
            async for event in turn:
                yield event
        finally:
            await provider.aclose()

    def steer(self, text: str) -> bool:
        """Send `text` into the running turn now: it is added as a user message at the turn's
        next safe point (after the running tool calls, before the next request) and a
        `SteeringAdded` event shows where. False when no turn runs (send it as a turn then).
        Call it on the event loop's thread (`loop.call_soon_threadsafe` from another)."""
        from forge.unicode_repair import repaired

        if not text.strip():
            return False
        return self.agent.steer(repaired(text, "the user's message"))

    def steer_when_running(self, text: str) -> None:
        """Like `steer`, but kept for the turn that is about to start when none runs yet
        (`forge run --steer-file`: a line may come before the turn begins). Thread-safe."""
        if text.strip():
            self.agent.steering.add(text)

    def unsent_steering(self) -> list[str]:
        """Steered messages the turn ended before adding (an interrupt, an error): the front
        end sends them as the next message instead. None wait afterwards."""
        return self.agent.steering.take()

    def agent_names(self) -> list[str]:
        """The subagents the `task` tool can run now (for `@agent-` completion); none when
        subagents are off."""
        if self.children is None or self.agent.subagents is None:
            return []
        return self.children.definitions().names()

    def _agent_request(self, text: str) -> str:
        """`@agent-<name>` in `text` asks for that subagent (docs/adr/0045)."""
        if "@agent-" not in text:
            return text
        from forge.agent.subagents.mentions import requested_agent, with_agent_request

        name = requested_agent(text, self.agent_names())
        return with_agent_request(text, name) if name is not None else text

    def skill_commands(self, *, taken: Iterable[str] = ()) -> list[tuple[str, str]]:
        """(name, description) of each skill the user may run as `/name` whose name no
        command in `taken` has (built-in and custom commands win; docs/adr/0046)."""
        if self.skills is None:
            return []
        from forge.agent.skills.commands import skill_commands

        runnable = skill_commands(self.skills, builtin=taken)
        return [(name, skill.description) for name, skill in sorted(runnable.skills.items())]

    def skill_command(self, text: str, *, taken: Iterable[str] = ()) -> str | None:
        """The message to send for `text` when it is `/name args` naming a skill the user may
        run whose name no command in `taken` has (built-in and custom commands win); the
        skill counts as loaded from then on. None otherwise (docs/adr/0046)."""
        from forge.agent.skills.commands import expand_skill_command

        found = expand_skill_command(self.skills, text, taken=taken) if self.skills else None
        return found[1] if found is not None else None

    def run_command(self, command: str) -> AsyncGenerator[AgentEvent, None]:
        """Run the user's `!command` in the workspace (no approval; cancelling ends its
        process group); with `tools.bang_to_conversation` the model sees it next turn
        (docs/adr/0030)."""
        from forge.agent.input.shell_escape import run_shell_escape

        tools = self.settings.tools
        return run_shell_escape(
            command,
            self.workspace,
            command_timeout=tools.command_timeout,
            conversation=self.agent.conversation if tools.bang_to_conversation else None,
        )

    def compact(self, instructions: str = "") -> AsyncGenerator[AgentEvent, None]:
        """Summarize the conversation now (`/compact`), guided by `instructions`; yields the
        context events it causes (and PreCompact/PostCompact hooks' notices)."""
        from forge.agent.hooks.turn_hooks import around_compaction

        return around_compaction(
            self.parts.hooks, instructions, lambda: self.agent.compact(instructions)
        )

    # --- hooks (docs/adr/0043) -----------------------------------------------------------------
    async def start_hooks(self, source: str | None = None) -> AsyncGenerator[AgentEvent, None]:
        """The hook files' problems as warnings, then SessionStart's hooks (`source`: startup,
        resume — the default for a resumed session — or clear) and their notices; their
        context goes with the next prompt, which waits for them. Call once per session."""
        hooks = self.parts.hooks
        if hooks is None:
            return
        for problem in hooks.problems():
            yield HookWarning(HOOK_FILE_PROBLEM, problem)
        started = hooks.start(source)
        if started is not None:
            for event in await asyncio.shield(started):
                yield event

    def reload_hooks(self) -> None:
        """Load the hooks again, as the settings and the workspace's trust say now (after a
        trust decision)."""
        if self.parts.hooks is not None:
            self.parts.hooks.reload(self.settings, self.trust)

    def hooks_report(self) -> str:
        """`/hooks`: every configured hook with its event, matcher, command, file and state,
        as plain text — as the files say now (they are read again)."""
        from forge.session.hook_report import hooks_report

        self.reload_hooks()

        return hooks_report(self.parts.hooks.hooks if self.parts.hooks is not None else None)

    # --- checkpoints and rewinding (forge.session.restore) ----------------------------------
    def rewind_points(self) -> list[RewindPoint]:
        """The session's turns, oldest first, each with the files its checkpoint holds: what
        `/rewind` lists."""
        return rewind_points(self.turns(), self.checkpoints)

    def plan_restore(self, before: str | None = None) -> PlannedRestore | None:
        """Plan putting files back, touching nothing: with `before` None, the files of the last
        turn that changed files (`/undo`); with a turn id, every file changed from that turn on
        (`/rewind`). The plan names the files edited since Forge wrote them, to ask about
        before `restore`. None when there is nothing to undo or no checkpoints are kept."""
        store = self.checkpoints
        if store is None:
            return None
        if before is None:
            return plan_undo(store, self.turns())
        return plan_rewind(store, self.turns(), before)

    def restore(
        self, planned: PlannedRestore, *, overwrite_conflicts: bool = False
    ) -> RestoreResult:
        """Put `planned`'s files back; a file edited since Forge wrote it is kept unless
        `overwrite_conflicts`."""
        store = self.checkpoints
        assert store is not None, "planned by plan_restore, which needs the checkpoints"
        return restore_files(store, planned, overwrite_conflicts=overwrite_conflicts)

    def undo(self, *, overwrite_conflicts: bool = False) -> RestoreResult | None:
        """Restore every file the last turn that changed files changed, without asking; None
        when there is nothing to undo."""
        planned = self.plan_restore()
        if planned is None:
            return None
        return self.restore(planned, overwrite_conflicts=overwrite_conflicts)

    def turns(self) -> list[SessionTurn]:
        """The session's turns, oldest first, as `/rewind` lists them."""
        return session_turns(self.log.path) if self.log.started else []

    def rewind_conversation(self, turn_id: str) -> None:
        """Take the conversation back to just before turn `turn_id` (recorded in the log);
        the model reads files again before writing them."""
        rewind_conversation(self.agent.conversation, self.log, turn_id, self.registry.read_ledger())
        if self.skills is not None:  # a skill loaded after that turn is no longer loaded
            self.skills.keep_loaded_in(self.messages)

    # --- reports -----------------------------------------------------------------------------
    def cost_report(self) -> CostReport:
        """The session's tokens and dollars per model, priced with `settings.prices`."""
        from forge.config.prices import price_table

        return self.agent.costs.report(price_table(self.settings.prices))

    def mcp_report(self) -> str:
        """`/mcp`'s Markdown: the servers, their tools and which are loaded (docs/adr/0054)."""
        from forge.agent.mcp.report import servers_report

        if self.mcp is None:
            return ""
        return servers_report(self.mcp, self.counter.count_tools, self.agent.tool_deferral)

    def mcp_definitions_line(self) -> str:
        """`/context`'s line on MCP tool definitions sent and deferred ("" without MCP)."""
        from forge.agent.mcp.report import definitions_sent_and_deferred

        deferral = self.agent.tool_deferral
        if self.mcp is None or not self.mcp.connections or deferral is None:
            return ""
        return definitions_sent_and_deferred(deferral, self.counter.count_tools)

    def context_report(self) -> ContextReport:
        """What `/context` and the gauge show: the prompt's size against the budget, the
        window, and the session's token totals."""
        manager = self.context_manager
        conversation = self.agent.conversation
        window = self.window
        return ContextReport(
            messages=conversation.messages,
            current_tokens=manager.current_tokens(conversation),
            max_tokens=manager.max_tokens,
            tool_tokens=manager.tool_tokens,
            window=window.current.describe() if window is not None else "",
            prompt_tokens=self.agent.session_prompt_tokens,
            completion_tokens=self.agent.session_completion_tokens,
            ledger=manager.ledger_text(),
        )

    def window_notice(self) -> str:
        """Once per window, while the window is a guess from the model's name: a sentence
        saying so (for `/context`); "" otherwise."""
        return (self.window.guess_notice() or "") if self.window is not None else ""

    async def count_ahead(self) -> None:
        """Count the conversation's tokens off the event loop (a resumed huge message), so
        the next `context_report` answers at once (docs/adr/0036)."""
        await self.context_manager.count_ahead(self.agent.conversation)

    def recache_notice(self) -> str | None:
        """For a resumed session on the Anthropic API: what re-caching its prompt costs when
        the provider's cache has expired (docs/adr/0037); None otherwise."""
        from forge.agent.history.cache_expiry import recache_notice
        from forge.config.prices import price_table

        llm = self.settings.llm
        if llm.provider != "anthropic":
            return None
        conversation = self.agent.conversation
        return recache_notice(
            conversation,
            self.context_manager.current_tokens(conversation),
            model=llm.model,
            ttl=llm.cache_ttl,
            prices=price_table(self.settings.prices),
        )

    def describe_call(self, call: ToolCall) -> str:
        """One line for `call` as its tool describes it (the path, the command); the tool's
        name for a call its tool cannot read (its error result follows)."""
        try:
            prepared = self.registry.prepare(call)
        except ToolError:
            return call.name
        return prepared.tool.describe(prepared.arguments)

    def models_url(self) -> str:
        """Where `list_models` asks (the Messages API lists its models under /v1)."""
        llm = self.settings.llm
        if llm.provider == "anthropic":
            from forge.llm.anthropic_provider import sdk_base_url

            return sdk_base_url(llm.effective_base_url) + "/v1"
        return llm.effective_base_url

    async def list_models(self) -> list[str]:
        """The models the session's server offers, asked through the session's provider
        (its own client and key); `forge.llm.model_list.ModelListError` says why not."""
        return await self.provider.list_models()

    # --- settings ----------------------------------------------------------------------------
    def apply_settings(self, new: Settings) -> str:
        """Switch the running session to `new` settings; returns what changed, in one line
        (see `forge.session.settings_apply`)."""
        changed = apply_settings(self, new)
        if self.children is not None:  # a child started later runs on the new settings
            self.children.settings = self.settings
            self.children.summarization_provider = self.summarization_provider
        return changed

    def set_mode(self, mode: PermissionMode) -> None:
        """Use permission mode `mode` from the next tool call on (docs/adr/0029)."""
        self.policy.mode = mode

    def use_window(self, tracker: WindowTracker) -> None:
        """Budget with `tracker`'s window from now on, and whenever it learns a new one."""
        self.window = tracker
        tracker.on_change = self._window_changed
        self.agent.context_window = tracker

    def _window_changed(self, window: ContextWindow) -> None:
        self.context_manager.set_provider(
            self.provider, context_window=window_tokens(window, self.settings.llm.model)
        )

    # --- lifetime ----------------------------------------------------------------------------
    def start_background(self) -> None:
        """Start connecting to the MCP servers and asking the server for the context window
        (call once the event loop runs; without this both start on the first turn, which
        then waits for them)."""
        if self.mcp is not None:
            self.mcp.start()
        if self.window is not None:
            self.window.start()  # a session built off the loop (the TUI's) has not asked yet

    async def wait_for_mcp(self, limit: float | None = None) -> None:
        """Wait until every MCP server is ready or failed, at most `limit` seconds (for
        `forge run`, whose one turn would otherwise start before the tools are listed)."""
        if self.mcp is not None:
            await self.mcp.wait_settled(limit)

    async def add_mcp_servers(
        self, servers: Mapping[str, McpServerSettings], limit: float | None = None
    ) -> str:
        """Start `servers` beside the configured ones, for this session only (`forge acp`: the
        editor's servers, once trusted); waits at most `limit` seconds until they are ready or
        failed. Returns what changed."""
        merged = {**self.settings.mcp_servers, **servers}
        self.apply_settings(self.settings.model_copy(update={"mcp_servers": merged}))
        if self.mcp is None:
            return ""
        async with asyncio.timeout(limit):
            return await self.mcp.reconfigured()

    async def aclose(self, reason: str = "exit") -> None:
        """Run SessionEnd's hooks (`reason`: exit, clear, other), then close every provider
        this session created (the current one and replaced ones) and the MCP servers (their
        processes stop)."""
        hooks, self.parts.hooks = self.parts.hooks, None  # once, however often it is called
        if hooks is not None:
            await hooks.end(reason)
        if self.parts.background is not None and self.parts.background.running():
            await asyncio.to_thread(self.end_background, reason)  # before the sandbox goes
        sandbox, self.parts.sandbox = self.parts.sandbox, None
        close_quietly(sandbox)
        if self.mcp is not None:
            await self.mcp.aclose()
        windows = [*self.retired_windows, *([self.window] if self.window is not None else [])]
        self.retired_windows = []
        for tracker in windows:
            await tracker.aclose()
        own = [
            self.provider,
            *([self.summarization_provider] if self.summarization_provider else []),
        ]
        providers, self.retired_providers = [*self.retired_providers, *own], []
        for provider in providers:
            await provider.aclose()
