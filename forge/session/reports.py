"""`Session.reports`: what the session says of itself — cost, context, window, the resumed
prompt's re-caching, hooks and MCP servers (`/cost`, `/context`, the gauge, `/hooks`, `/mcp`).

Every report is read from the session's parts as they are now (a settings switch replaces the
provider, the context manager, the window tracker and the tokenizer), so the role reads them
through the session (docs/adr/0059 part 4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from forge.agent.costs import CostReport
from forge.agent.parts import AgentParts
from forge.agent.turn.loop import Agent
from forge.config.settings import Settings
from forge.context.manager import Manager
from forge.llm.messages import Message
from forge.llm.tokenizer import TiktokenCounter
from forge.llm.window_discovery import WindowTracker
from forge.session.servers import SessionServers


@dataclass(frozen=True)
class ContextReport:
    """The prompt as the context manager sees it now, and the session's token totals."""

    messages: Sequence[Message]
    """The conversation (read-only: a front end shows it, never changes it)."""
    current_tokens: int
    """The prompt's size the next request would have (messages and tool definitions)."""
    max_tokens: int
    """The budget the context manager keeps the prompt under."""
    tool_tokens: int
    """What the tool definitions add to every request."""
    window: str
    """The model's context window and where it came from ("" when unknown)."""
    prompt_tokens: int
    """Prompt tokens the agent's requests sent this session (a resumed one's included)."""
    completion_tokens: int
    """Completion tokens the agent's requests received this session."""
    ledger: str = ""
    """The work ledger as the prompt shows it once pinned ("" while the session did nothing
    a ledger records; docs/adr/0050)."""


class _Owner(Protocol):
    """What the role reads of `forge.session.core.Session` (named here, so the two modules
    do not import each other)."""

    settings: Settings
    parts: AgentParts
    agent: Agent
    counter: TiktokenCounter
    window: WindowTracker | None
    servers: SessionServers

    @property
    def context_manager(self) -> Manager: ...


class SessionReports:
    """The session's reports, each as plain values or text a front end renders."""

    def __init__(self, owner: _Owner) -> None:
        self._owner = owner

    def cost(self) -> CostReport:
        """The session's tokens and dollars per model, priced with `settings.prices`."""
        from forge.config.prices import price_table

        return self._owner.agent.costs.report(price_table(self._owner.settings.prices))

    def context(self) -> ContextReport:
        """What `/context` and the gauge show: the prompt's size against the budget, the
        window, and the session's token totals."""
        owner = self._owner
        manager = owner.context_manager
        agent = owner.agent
        window = owner.window
        return ContextReport(
            messages=agent.conversation.messages,
            current_tokens=manager.current_tokens(agent.conversation),
            max_tokens=manager.max_tokens,
            tool_tokens=manager.tool_tokens,
            window=window.current.describe() if window is not None else "",
            prompt_tokens=agent.session_prompt_tokens,
            completion_tokens=agent.session_completion_tokens,
            ledger=manager.ledger_text(),
        )

    @property
    def token_totals(self) -> tuple[int, int]:
        """Prompt and completion tokens of the agent's requests this session (a resumed
        one's included)."""
        agent = self._owner.agent
        return agent.session_prompt_tokens, agent.session_completion_tokens

    @property
    def summaries_disabled(self) -> bool:
        """Whether a permanent error turned LLM summaries off for the session (ADR 0024)."""
        return self._owner.context_manager.breaker.disabled is not None

    def window_notice(self) -> str:
        """Once per window, while the window is a guess from the model's name: a sentence
        saying so (for `/context`); "" otherwise."""
        window = self._owner.window
        return (window.guess_notice() or "") if window is not None else ""

    async def count_ahead(self) -> None:
        """Count the conversation's tokens off the event loop (a resumed huge message), so
        the next `context` answers at once (docs/adr/0036)."""
        await self._owner.context_manager.count_ahead(self._owner.agent.conversation)

    def recache_notice(self) -> str | None:
        """For a resumed session on the Anthropic API: what re-caching its prompt costs when
        the provider's cache has expired (docs/adr/0037); None otherwise."""
        from forge.agent.history.cache_expiry import recache_notice
        from forge.config.prices import price_table

        settings = self._owner.settings
        if settings.llm.provider != "anthropic":
            return None
        conversation = self._owner.agent.conversation
        return recache_notice(
            conversation,
            self._owner.context_manager.current_tokens(conversation),
            model=settings.llm.model,
            ttl=settings.llm.cache_ttl,
            prices=price_table(settings.prices),
        )

    def hooks(self) -> str:
        """`/hooks`: every configured hook with its event, matcher, command, file and state,
        as plain text — as the files say now (they are read again)."""
        from forge.session.hook_report import hooks_report

        self._owner.servers.reload_hooks()
        hooks = self._owner.parts.hooks
        return hooks_report(hooks.hooks if hooks is not None else None)

    def sandbox(self) -> list[str]:
        """`/sandbox`: what confines the model's commands, with which mechanism, or why
        nothing does (docs/adr/0053), one line each; "Sandbox: closed." once closed."""
        from forge.agent.sandbox.report import sandbox_lines

        sandbox = self._owner.parts.sandbox
        return sandbox_lines(sandbox.state()) if sandbox is not None else ["Sandbox: closed."]

    def mcp(self) -> str:
        """`/mcp`'s Markdown: the servers, their tools and which are loaded (docs/adr/0054);
        "" without MCP."""
        from forge.agent.mcp.report import servers_report

        mcp = self._owner.servers.mcp
        if mcp is None:
            return ""
        count = self._owner.counter.count_tools
        return servers_report(mcp, count, self._owner.agent.tool_deferral)

    def mcp_tool_tokens(self) -> dict[str, int]:
        """Per MCP server, what its tool definitions add to every request (for `/context`;
        empty without servers)."""
        from forge.agent.mcp.report import tool_tokens_by_server

        mcp = self._owner.servers.mcp
        if mcp is None or not mcp.connections:
            return {}
        return tool_tokens_by_server(mcp, self._owner.counter.count_tools)

    def mcp_definitions_line(self) -> str:
        """`/context`'s line on MCP tool definitions sent and deferred ("" without MCP)."""
        from forge.agent.mcp.report import definitions_sent_and_deferred

        deferral = self._owner.agent.tool_deferral
        mcp = self._owner.servers.mcp
        if mcp is None or not mcp.connections or deferral is None:
            return ""
        return definitions_sent_and_deferred(deferral, self._owner.counter.count_tools)
