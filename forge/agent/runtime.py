"""Wiring: settings in, a ready agent out (provider, token counter, context manager, tools,
approval policy, session log), and the one path that applies changed settings while running.

Both clients build one `Runtime` and drive `runtime.agent`; the TUI and the config watcher
call `Runtime.apply_settings` when the settings change.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge.agent.approvals import ApprovalPolicy
from forge.agent.checkpoint_cleanup import remove_stale_temporaries
from forge.agent.checkpoints import CheckpointStore, checkpoint_dir, current_turn
from forge.agent.costs import CostLedger
from forge.agent.interruption import note_cut_off_turn
from forge.agent.loop import Agent
from forge.agent.mcp import McpServers
from forge.agent.providers import (
    PROVIDER_FIELDS,
    SUMMARIZATION_SERVER_FIELDS,
    AnyProvider,
    make_provider,
    make_summarization_provider,
)
from forge.agent.recall_archive import SessionArchive
from forge.agent.sessions import ResumedSession, SessionLog, SessionStore
from forge.agent.system_prompt import build_system_prompt, session_date
from forge.agent.tools import ToolRegistry, default_registry
from forge.agent.tools.recall import RecallTool
from forge.agent.trust import WorkspaceTrust
from forge.config.ephemeral import is_ephemeral
from forge.config.secrets import remember_settings_secrets
from forge.config.settings import Settings
from forge.context.conversation import Conversation
from forge.context.manager import Manager
from forge.llm.model_info import context_window, encoding_name_for
from forge.llm.tokenizer import TiktokenCounter
from forge.llm.window_discovery import ContextWindow, WindowCache, WindowSource, WindowTracker

logger = logging.getLogger(__name__)


def make_window_tracker(settings: Settings, provider: AnyProvider) -> WindowTracker:
    """The context window of the settings' model on their server: `context.max_tokens` when
    set, else what the server states (asked in the background, cached), else a guess from
    the name (docs/adr/0019). The tracker starts asking if an event loop is running."""
    tracker = WindowTracker(
        settings.llm.model,
        settings.llm.effective_base_url,
        fetch=provider.fetch_json,
        configured=settings.context.max_tokens,
        cache=WindowCache(),
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return tracker  # started by the first turn (`Agent` settles it before its first call)
    tracker.start()
    return tracker


def window_tokens(window: ContextWindow, model: str) -> int:
    """The window the context manager budgets with (a configured budget is applied by the
    manager itself, so the name's window stands beside it)."""
    return context_window(model) if window.source is WindowSource.CONFIGURED else window.tokens


def secrets_of(settings: Settings, file_data: Mapping[str, Any] | None = None) -> list[str]:
    """Values that must never reach a session file or a log: every API key Forge knows of —
    these settings' key, the environment's, the file's (`file_data`, the config file's raw
    mapping) and every key seen earlier in this process. They are remembered process-wide
    (`forge.config.secrets.KNOWN_SECRETS`), so every artefact writer masks them."""
    return remember_settings_secrets(settings, file_data)


def _summary_dir(store: SessionStore, session_id: str) -> Path | None:
    """Where summaries are archived; none with `forge run --ephemeral`."""
    return None if is_ephemeral() else store.summary_dir(session_id)


def _make_manager(
    settings: Settings,
    provider: AnyProvider,
    counter: TiktokenCounter,
    summary_dir: Path | None,
    window: ContextWindow,
) -> Manager:
    return Manager(
        settings.context,
        provider,
        counter,
        context_window=window_tokens(window, settings.llm.model),
        summarization_model=settings.llm.summarization_model,
        summary_dir=summary_dir,
    )


@dataclass
class Runtime:
    """Everything one running session is made of. Build it with `build_runtime`."""

    settings: Settings
    workspace: Path
    provider: AnyProvider
    counter: TiktokenCounter
    context_manager: Manager
    registry: ToolRegistry
    policy: ApprovalPolicy
    store: SessionStore
    session: SessionLog
    agent: Agent
    window: WindowTracker | None = None
    """The model's context window and where it came from (shown by `/context`)."""
    mcp: McpServers | None = None
    """The session's MCP servers, whose ready tools the registry offers (`/mcp`)."""
    trust: WorkspaceTrust | None = None
    """Whether the workspace's own definitions may run (`/trust`; docs/adr/0034)."""
    summarization_provider: AnyProvider | None = None
    """The summarization server's provider when it is not the conversation's (docs/adr/0037)."""
    _retired_providers: list[AnyProvider] = field(default_factory=list)
    _retired_windows: list[WindowTracker] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.window is not None:
            self._use_window(self.window)
        if self.mcp is not None:
            self.mcp.in_turn = self.turn_running

    def turn_running(self) -> bool:
        """Whether a turn (or a /compact run) is in progress."""
        return getattr(self.agent, "_current_turn", None) is not None

    def _use_window(self, tracker: WindowTracker) -> None:
        """Budget with `tracker`'s window from now on, and whenever it learns a new one."""
        self.window = tracker
        tracker.on_change = self._window_changed
        self.agent.context_window = tracker

    def _window_changed(self, window: ContextWindow) -> None:
        self.context_manager.set_provider(
            self.provider, context_window=window_tokens(window, self.settings.llm.model)
        )

    @property
    def session_id(self) -> str:
        """The id of the session being recorded."""
        return self.session.id

    def apply_settings(self, new: Settings) -> str:
        """Switch the running agent to `new` settings; returns what changed, in one line.

        A changed model, base URL, key, timeout or retry count makes a new provider, given to
        the context manager and the agent (the old one is closed by `aclose`, since a turn may
        still be using it). The summarization model is always passed on. Changed context
        settings, or a model with another tokenizer, make a new context manager. The approval
        policy and the command timeout follow the tools settings; "always" approvals given
        this session are kept. A changed model, base URL or `context.max_tokens` makes a new
        context-window tracker (the server is asked again, or the cache answers).
        """
        old = self.settings
        changes: list[str] = []
        if any(getattr(old.llm, name) != getattr(new.llm, name) for name in PROVIDER_FIELDS):
            self._retired_providers.append(self.provider)
            self.provider = make_provider(new.llm)
            changes.append(
                f"provider: {new.llm.model} at {new.llm.effective_base_url} ({new.llm.provider})"
            )
        summaries_moved = any(
            getattr(old.llm, name) != getattr(new.llm, name) for name in SUMMARIZATION_SERVER_FIELDS
        )
        if summaries_moved:
            if self.summarization_provider is not None:
                self._retired_providers.append(self.summarization_provider)
            self.summarization_provider = make_summarization_provider(new.llm)
        window_moved = (old.llm.model, old.llm.effective_base_url, old.context.max_tokens) != (
            new.llm.model,
            new.llm.effective_base_url,
            new.context.max_tokens,
        )
        if window_moved or self.window is None:
            if self.window is not None:
                self.window.on_change = None  # a late answer about the old model changes nothing
                self._retired_windows.append(self.window)
            self.settings = new  # the tracker's callback reads the model from here
            self._use_window(make_window_tracker(new, self.provider))
        assert self.window is not None
        window = window_tokens(self.window.current, new.llm.model)
        rebuild_manager = old.context != new.context or (
            encoding_name_for(new.llm.model) != self.counter.encoding_name
        )
        if rebuild_manager:
            if self.counter.model != new.llm.model:
                self.counter = TiktokenCounter(new.llm.model)
            summary_dir = _summary_dir(self.store, self.session_id)
            manager = _make_manager(
                new, self.provider, self.counter, summary_dir, self.window.current
            )
            # A turn running now keeps sending its context events to its client.
            manager.event_sink = self.context_manager.event_sink
            manager.usage_sink = self.agent.costs.record_summary
            self.context_manager = manager
            self.agent.context_manager = manager
            changes.append("context settings")
        else:
            self.context_manager.set_provider(self.provider, context_window=window)
        self.context_manager.set_summarization_model(new.llm.summarization_model)
        self.context_manager.set_summarization_provider(self.summarization_provider)
        self.agent.set_provider(self.provider)
        if old.llm.summarization_model != new.llm.summarization_model:
            changes.append(f"summarization model: {new.llm.effective_summarization_model}")
        if old.tools != new.tools:
            self.policy = _carry_over(self.policy, old, new)
            self.agent.policy = self.policy
            self.agent.command_timeout = new.tools.command_timeout
            changes.append("tool approvals and limits")
        if isinstance(self.agent.checkpoints, CheckpointStore):
            self.agent.checkpoints.max_bytes = new.checkpoints.max_bytes
        if self.trust is not None:
            self.trust.env_allowlist = frozenset(new.trust.env_allowlist)
        allowlist_changed = old.trust.env_allowlist != new.trust.env_allowlist
        if self.mcp is not None:
            self.mcp.limits = new.mcp  # servers (re)started from now on use the new bounds
        if (old.mcp_servers != new.mcp_servers or allowlist_changed) and self.mcp is not None:
            # Between turns: servers start, stop or restart once the running turn has ended.
            self.mcp.reconfigure(new.mcp_servers)
            changes.append("MCP servers")
        # The old key stays masked too: it may still turn up in output (an env dump, a log).
        self.session.record_model(new.llm.model)
        self.session.set_redactions(sorted({*secrets_of(old), *secrets_of(new)}))
        self.settings = new
        description = "; ".join(changes) or "no changes"
        logger.info("settings applied: %s", description)
        return description

    def start_background(self) -> None:
        """Start connecting to the MCP servers and asking the server for the context window
        (call once the event loop runs; without this both start on the first turn, which
        then waits for them)."""
        if self.mcp is not None:
            self.mcp.start()
        if self.window is not None:
            self.window.start()  # a runtime built off the loop (the TUI's) has not asked yet

    async def wait_for_mcp(self, limit: float | None = None) -> None:
        """Wait until every MCP server is ready or failed, at most `limit` seconds (for
        `forge run`, whose one turn would otherwise start before the tools are listed)."""
        if self.mcp is not None:
            await self.mcp.wait_settled(limit)

    async def aclose(self) -> None:
        """Close every provider this runtime created (the current one and replaced ones) and
        the MCP servers (their processes stop)."""
        if self.mcp is not None:
            await self.mcp.aclose()
        windows = [*self._retired_windows, *([self.window] if self.window is not None else [])]
        self._retired_windows = []
        for tracker in windows:
            await tracker.aclose()
        own = [
            self.provider,
            *([self.summarization_provider] if self.summarization_provider else []),
        ]
        providers, self._retired_providers = [*self._retired_providers, *own], []
        for provider in providers:
            await provider.aclose()


def _carry_over(policy: ApprovalPolicy, old: Settings, new: Settings) -> ApprovalPolicy:
    """A policy for the `new` tools settings keeping this session's "always" answers and its
    mode, unless `tools.mode` itself changed (then the new default applies)."""
    mode = new.tools.mode if old.tools.mode != new.tools.mode else policy.mode
    renewed = ApprovalPolicy(
        auto_approve=new.tools.auto_approve,
        command_allowlist=new.tools.command_allowlist,
        mode=mode,
    )
    for name in policy.approved_this_session:
        renewed.approve_always(name)
    return renewed


def build_runtime(
    settings: Settings,
    workspace: Path,
    *,
    session_id: str | None = None,
    resume_latest: bool = False,
    ask_user: bool = True,
    approve_all: bool = False,
    mode: str | None = None,
    max_llm_calls: int = 50,
    store: SessionStore | None = None,
    trust_workspace: bool = False,
    resumed: ResumedSession | None = None,
) -> Runtime:
    """A runtime for `workspace`: a new session, or the one named `session_id`, or (with
    `resume_latest`) the latest of this workspace when there is one, or `resumed`, a session
    the caller has already read (`SessionStore.open_resumed`; the TUI shows its history first).

    Raises `SessionNotFoundError` for an unknown `session_id`, ValueError for a malformed one.
    `ask_user=False` (headless) makes `ask_question` answer itself; `approve_all` approves
    every tool call (`--yes`); `mode` is the permission mode (default `tools.mode`);
    `trust_workspace` trusts the workspace's own definitions for this run (`--trust-workspace`),
    else the stored decision counts (docs/adr/0034).
    """
    workspace = workspace.expanduser().resolve()
    store = store or SessionStore()
    trust = WorkspaceTrust(
        workspace, trusted_for_run=trust_workspace, env_allowlist=settings.trust.env_allowlist
    )
    mcp = McpServers(settings.mcp_servers, workspace, trust, limits=settings.mcp)
    redact = sorted({*secrets_of(settings), *mcp.secrets()})
    conversation: Conversation | None = None
    if resumed is None:
        # A unique start or end of an id is enough; the latest is found by its header line.
        resumed = store.open_resumed(workspace, session_id, resume_latest=resume_latest)
    session_id = resumed.id if resumed is not None else None
    if resumed is not None:
        conversation, session = resumed.conversation, resumed.log
        session.set_redactions(redact)
    else:
        session = store.create(workspace, settings.llm.model, redact=redact)
        conversation = Conversation()
    session.attach(conversation)
    if session_id is not None:
        # Recorded in the session like any change: the model hears that the turn was cut off.
        note_cut_off_turn(conversation)

    provider = make_provider(settings.llm)
    counter = TiktokenCounter(settings.llm.model)
    tracker = make_window_tracker(settings, provider)
    manager = _make_manager(
        settings, provider, counter, _summary_dir(store, session.id), tracker.current
    )
    registry = default_registry()
    registry.register(RecallTool(SessionArchive(session.path)))
    registry.add_source(mcp)
    summarization_provider = make_summarization_provider(settings.llm)
    manager.set_summarization_provider(summarization_provider)
    manager.set_tools(registry.specs())  # a resumed session's gauge is right before a request
    mcp.start()  # a no-op until an event loop runs; then the first turn starts them
    policy = ApprovalPolicy(
        auto_approve=settings.tools.auto_approve,
        command_allowlist=settings.tools.command_allowlist,
        approve_all=approve_all,
        mode=mode or settings.tools.mode,
    )
    agent = Agent(
        provider,
        manager,
        registry,
        policy,
        workspace,
        # A resumed session keeps the date it started on: the system prompt stays the same
        # bytes, so the provider's prompt cache still matches (docs/adr/0037).
        system_prompt=build_system_prompt(
            workspace, registry.specs(), interactive=ask_user, today=session_date(session.header)
        ),
        conversation=conversation,
        max_llm_calls=max_llm_calls,
        ask_user=ask_user,
        command_timeout=settings.tools.command_timeout,
    )
    if not is_ephemeral():  # `forge run --ephemeral` keeps no checkpoints (nothing to rewind)
        remove_stale_temporaries(session.path.parent)  # left by a kill during a checkpoint write
        agent.checkpoints = CheckpointStore(
            checkpoint_dir(session.path),
            workspace,
            max_bytes=settings.checkpoints.max_bytes,
            current=lambda: current_turn(conversation),
            on_restored=ledger.forget if (ledger := registry.read_ledger()) is not None else None,
        )
    if session.costs is not None:  # a resumed session: its cost and token counts go on
        agent.costs = CostLedger.from_record(session.costs)
        agent.session_prompt_tokens, agent.session_completion_tokens = agent.costs.agent_tokens()
    agent.on_costs = lambda ledger: session.record_costs(ledger.to_record())
    manager.usage_sink = agent.costs.record_summary  # summaries are costed too
    return Runtime(
        settings=settings,
        workspace=workspace,
        provider=provider,
        counter=counter,
        context_manager=manager,
        registry=registry,
        policy=policy,
        store=store,
        session=session,
        agent=agent,
        window=tracker,
        mcp=mcp,
        trust=trust,
        summarization_provider=summarization_provider,
    )
