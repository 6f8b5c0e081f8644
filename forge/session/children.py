"""The session's side of a subagent: the parts one child run is made of (docs/adr/0045).

`SessionChildren.make` gives a child the parent's provider (or a clone of it on the
definition's model: same server, key and HTTP client), a context manager of its own made as
the session's is (same settings, its own summaries folder), a fresh tool registry filtered by
the definition (its own read ledger, so a file another child changed must be read again before
it is written; the session's MCP tools that the definition allows; never `task`), and a
session file of its own whose header names the parent session and the agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import cast

from forge.agent.costs import CostLedger
from forge.agent.history.recall_archive import SessionArchive
from forge.agent.history.session_file import SessionLog, SessionStore
from forge.agent.mcp.deferral import ToolDeferral
from forge.agent.parts import AgentParts
from forge.agent.providers import AnyProvider
from forge.agent.subagents.definitions import (
    AgentDefinition,
    AgentDefinitions,
    load_agent_definitions,
)
from forge.agent.subagents.run import ChildSetup
from forge.agent.tools.recall import RecallTool
from forge.agent.tools.registry import ToolRegistry, default_registry
from forge.agent.tools.web_fetch import WEB_FETCH_TOOL, WebFetchTool
from forge.agent.turn.turn_events import TurnEvents
from forge.config.prices import PriceTable, price_table
from forge.config.settings import Settings
from forge.context.conversation import Conversation
from forge.llm.model_info import context_window
from forge.llm.protocols import ModelCloner, Provider
from forge.llm.tokenizer import TiktokenCounter
from forge.llm.window_discovery import ContextWindow, WindowSource, WindowTracker
from forge.session.parts import make_manager, summary_dir

ALWAYS_OFFERED = frozenset({"task_completion", "converse"})
"""A child can always end its run, whatever its `tools` list says."""
NEVER_OFFERED = frozenset({"task", "ask_question"})
"""Children cannot start children, and nobody answers a child's questions."""


class SessionChildren:
    """Makes each child's parts from the session's (the `ChildFactory` of
    `forge.agent.subagents.run`)."""

    def __init__(
        self,
        *,
        settings: Settings,
        workspace: Path,
        parts: AgentParts,
        counter: TiktokenCounter,
        store: SessionStore,
        parent_log: SessionLog,
        window: WindowTracker | None,
        summarization_provider: AnyProvider | None,
        mcp: ToolDeferral | None,
        redact: Sequence[str] = (),
    ) -> None:
        self.settings = settings
        """The session's settings (kept current by `Session.apply_settings`)."""
        self.summarization_provider = summarization_provider
        self._workspace = workspace
        self._parts = parts
        self._counter = counter
        self._store = store
        self._parent_log = parent_log
        self._window = window
        self._mcp = mcp
        self._redact = list(redact)

    @property
    def max_parallel(self) -> int:
        """`agents.max_parallel`."""
        return self.settings.agents.max_parallel

    def definitions(self) -> AgentDefinitions:
        """The built-in, user and project agents as their files say now."""
        return load_agent_definitions(
            self._workspace, max_file_bytes=self.settings.agents.max_file_bytes
        )

    def prices(self) -> PriceTable:
        """The settings' price table."""
        return price_table(self.settings.prices)

    def _provider(self, definition: AgentDefinition) -> Provider:
        """The session's provider, or the summarization server's (`provider: summarization`),
        on the definition's model (for the summarization server: the summarization model
        unless the definition names one)."""
        parent: Provider = self._parts.provider
        model = definition.model
        if definition.provider == "summarization":
            llm = self.settings.llm
            model = model or llm.effective_summarization_model
            if self.summarization_provider is not None:  # a server of its own
                parent = self.summarization_provider
        if not model or model == parent.model or not isinstance(parent, ModelCloner):
            return parent
        return parent.clone_with_model(model)

    def make(
        self, definition: AgentDefinition, costs: CostLedger, conversation: Conversation
    ) -> ChildSetup:
        """One child's parts; its session file records `conversation` from now on."""
        provider = self._provider(definition)
        log = self._store.create(
            self._workspace,
            provider.model,
            redact=self._redact,
            parent=self._parent_log.id,
            agent=definition.name,
        )
        log.attach(conversation)
        turn_events = TurnEvents()
        same_model = provider.model == self._parts.provider.model
        window = (
            self._window.current
            if self._window is not None and same_model
            else ContextWindow(context_window(provider.model), WindowSource.GUESSED)
        )
        manager = make_manager(
            self.settings,
            cast("AnyProvider", provider),  # the session's provider or its clone
            self._counter,
            summary_dir(self._store, log.id),
            window,
            costs.record_summary,
            turn_events.emit,
        )
        manager.set_summarization_provider(self.summarization_provider)
        deferral = self._mcp.for_child(definition.allows) if self._mcp is not None else None
        registry = self._registry(definition, log, deferral)
        if definition.allows(WEB_FETCH_TOOL):  # as the parent has it (docs/adr/0055)
            registry.register(
                WebFetchTool(
                    self.settings.tools.web_fetch, summarizer=manager.provider_for_summarization
                )
            )
        manager.set_tools(registry.specs())
        return ChildSetup(
            provider, manager, turn_events, registry, session_id=log.id, tool_deferral=deferral
        )

    def _registry(
        self, definition: AgentDefinition, log: SessionLog, deferral: ToolDeferral | None
    ) -> ToolRegistry:
        base = default_registry()  # the child's own read ledger
        tools = [
            base.get(name)
            for name in base.names()
            if name not in NEVER_OFFERED and (name in ALWAYS_OFFERED or definition.allows(name))
        ]
        registry = ToolRegistry(tools)
        if definition.allows("recall"):
            registry.register(RecallTool(SessionArchive(log.path)))
        if deferral is not None:  # the MCP tools the definition allows, deferred or not
            registry.add_source(deferral)
        return registry
