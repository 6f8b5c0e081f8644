"""The settings switch: new settings reach every part of a running session, each part once.

Called by `Session.apply_settings`, which the TUI's `ConfigReloadController` (the overlay, the
file watcher, `/model`) calls. A part that must change is replaced in the session's
`AgentParts`, which the agent reads too: nothing is assigned to two owners.
"""

from __future__ import annotations

import logging
from typing import Protocol

from forge.agent.approvals import ApprovalPolicy
from forge.agent.history.session_file import SessionLog, SessionStore
from forge.agent.parts import AgentParts
from forge.agent.providers import (
    PROVIDER_FIELDS,
    SUMMARIZATION_SERVER_FIELDS,
    AnyProvider,
    make_provider,
    make_summarization_provider,
)
from forge.agent.sandbox.sandbox import close_quietly, command_sandbox
from forge.agent.skills.catalog import SkillCatalog
from forge.agent.turn.loop import Agent
from forge.config.settings import Settings
from forge.context.manager import Manager
from forge.llm.model_info import encoding_name_for
from forge.llm.tokenizer import TiktokenCounter
from forge.llm.window_discovery import WindowTracker
from forge.session.history import SessionHistory
from forge.session.parts import (
    make_manager,
    make_window_tracker,
    model_cache_pricing,
    secrets_of,
    summary_dir,
    window_tokens,
)
from forge.session.servers import SessionServers

logger = logging.getLogger(__name__)


class Session(Protocol):
    """What the switch changes of `forge.session.core.Session` (named here, so this module
    and the one that calls it do not import each other)."""

    settings: Settings
    parts: AgentParts
    counter: TiktokenCounter
    store: SessionStore
    log: SessionLog
    agent: Agent
    window: WindowTracker | None
    servers: SessionServers
    history: SessionHistory
    summarization_provider: AnyProvider | None
    retired_providers: list[AnyProvider]
    retired_windows: list[WindowTracker]
    skills: SkillCatalog | None

    @property
    def provider(self) -> AnyProvider: ...

    @property
    def context_manager(self) -> Manager: ...

    @property
    def policy(self) -> ApprovalPolicy: ...

    @property
    def session_id(self) -> str: ...

    def use_window(self, tracker: WindowTracker) -> None: ...


def apply_settings(session: Session, new: Settings) -> str:
    """Switch `session` to `new` settings; returns what changed, in one line.

    A changed model, base URL, key, timeout or retry count makes a new provider (the old one
    is closed by `aclose`, since a turn may still be using it). The summarization model is
    always passed on. Changed context settings, or a model with another tokenizer, make a new
    context manager. The approval policy and the command timeout follow the tools settings;
    "always" approvals given this session are kept. A changed model, base URL or
    `context.max_tokens` makes a new context-window tracker (the server is asked again, or
    the cache answers).
    """
    old = session.settings
    changes = [_switch_provider(session, old, new)]
    _switch_window(session, old, new)
    changes.append(_switch_manager(session, old, new))
    if old.llm.summarization_model != new.llm.summarization_model:
        changes.append(f"summarization model: {new.llm.effective_summarization_model}")
    changes.append(_switch_tools(session, old, new))
    changes.append(_switch_mcp_and_trust(session, old, new))
    if old.hooks != new.hooks and session.parts.hooks is not None:
        session.parts.hooks.reload(new, session.servers.trust)  # from the next event on (ADR 0043)
        changes.append("hooks")
    if session.skills is not None:  # the listing stays; use and `/skills` follow (ADR 0046)
        session.skills.disabled = tuple(new.skills.disabled)
        session.skills.max_file_bytes = new.skills.max_file_bytes
    # The old key stays masked too: it may still turn up in output (an env dump, a log).
    session.log.record_model(new.llm.model)
    session.log.set_redactions(sorted({*secrets_of(old), *secrets_of(new)}))
    session.settings = new
    description = "; ".join(change for change in changes if change) or "no changes"
    logger.info("settings applied: %s", description)
    return description


def _switch_provider(session: Session, old: Settings, new: Settings) -> str:
    """A new conversation provider and summarization provider where their servers moved."""
    change = ""
    if any(getattr(old.llm, name) != getattr(new.llm, name) for name in PROVIDER_FIELDS):
        session.retired_providers.append(session.provider)
        session.parts.provider = make_provider(new.llm)
        change = f"provider: {new.llm.model} at {new.llm.effective_base_url} ({new.llm.provider})"
    if any(
        getattr(old.llm, name) != getattr(new.llm, name) for name in SUMMARIZATION_SERVER_FIELDS
    ):
        if session.summarization_provider is not None:
            session.retired_providers.append(session.summarization_provider)
        session.summarization_provider = make_summarization_provider(new.llm)
    return change


def _switch_window(session: Session, old: Settings, new: Settings) -> None:
    """A new context-window tracker when the model, its server or the budget moved."""
    moved = (old.llm.model, old.llm.effective_base_url, old.context.max_tokens) != (
        new.llm.model,
        new.llm.effective_base_url,
        new.context.max_tokens,
    )
    if moved or session.window is None:
        if session.window is not None:
            session.window.on_change = None  # a late answer about the old model changes nothing
            session.retired_windows.append(session.window)
        session.settings = new  # the tracker's callback reads the model from here
        session.use_window(make_window_tracker(new, session.provider))


def _switch_manager(session: Session, old: Settings, new: Settings) -> str:
    """A new context manager for changed context settings or tokenizer, else the current one
    told the provider and window; either way the summarization model and server."""
    assert session.window is not None
    window = session.window.current
    change = ""
    if old.context != new.context or encoding_name_for(new.llm.model) != (
        session.counter.encoding_name
    ):
        if session.counter.model != new.llm.model:
            session.counter = TiktokenCounter(new.llm.model, image_provider=new.llm.provider)
        manager = make_manager(
            new,
            session.provider,
            session.counter,
            summary_dir(session.store, session.session_id),
            window,
            session.agent.costs.record_summary,
            # The agent's router: a turn running now keeps sending its events to its client.
            session.agent.turn_events.emit,
        )
        session.parts.context_manager = manager
        change = "context settings"
    else:
        session.context_manager.set_provider(
            session.provider, context_window=window_tokens(window, new.llm.model)
        )
    session.context_manager.set_summarization_model(new.llm.summarization_model)
    session.context_manager.set_summarization_provider(session.summarization_provider)
    session.context_manager.set_cache_pricing(model_cache_pricing(new))
    return change


def _switch_tools(session: Session, old: Settings, new: Settings) -> str:
    """The approval policy, command timeout and checkpoint bound the tools settings give."""
    checkpoints = session.history.checkpoints
    if checkpoints is not None:
        checkpoints.max_bytes = new.checkpoints.max_bytes
    if old.tools == new.tools:
        return ""
    session.parts.policy = carry_over(session.policy, old, new)
    session.parts.command_timeout = new.tools.command_timeout
    if (background := session.parts.background) is not None:  # for the next ones started
        background.max_running = new.tools.max_background
        background.timeout = new.tools.background_timeout
    if (old.tools.sandbox, old.tools.hide_env) != (new.tools.sandbox, new.tools.hide_env):
        previous = session.parts.sandbox
        readable = previous.readable if previous is not None else None
        session.parts.sandbox = command_sandbox(new, session.agent.workspace, readable)
        close_quietly(previous)
    return "tool approvals and limits"


def _switch_mcp_and_trust(session: Session, old: Settings, new: Settings) -> str:
    """The trust's env allowlist and the MCP servers' bounds; servers reconfigured (between
    turns) when their definitions or the allowlist changed."""
    trust, mcp = session.servers.trust, session.servers.mcp
    if trust is not None:
        trust.env_allowlist = frozenset(new.trust.env_allowlist)
    if mcp is None:
        return ""
    mcp.limits = new.mcp  # servers (re)started from now on use the new bounds
    if old.mcp_servers != new.mcp_servers or old.trust.env_allowlist != new.trust.env_allowlist:
        mcp.reconfigure(new.mcp_servers)
        return "MCP servers"
    return ""


def carry_over(policy: ApprovalPolicy, old: Settings, new: Settings) -> ApprovalPolicy:
    """A policy for the `new` tools settings keeping this session's "always" answers and its
    mode, unless `tools.mode` itself changed (then the new default applies)."""
    mode = new.tools.mode if old.tools.mode != new.tools.mode else policy.mode
    renewed = ApprovalPolicy(
        auto_approve=new.tools.auto_approve,
        command_allowlist=new.tools.command_allowlist,
        mode=mode,
        granted=policy.granted,
    )
    for name in policy.approved_this_session:
        renewed.approve_always(name)
    return renewed
