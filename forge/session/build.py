"""Settings in, a ready `Session` out: every part made, then given at construction.

`build_session` makes the provider(s), the token counter, the context manager, the tools, the
approval policy, the checkpoints, the cost ledger, the session log, the window tracker, the
MCP servers and the workspace's trust, and hands each to what uses it when that is built —
nothing is wired afterwards (docs/adr/0041-session-api.md).
"""

from __future__ import annotations

from pathlib import Path

from forge.agent.approvals import ApprovalPolicy
from forge.agent.costs import CostLedger
from forge.agent.history.checkpoint_cleanup import remove_stale_temporaries
from forge.agent.history.checkpoints import CheckpointStore, checkpoint_dir, current_turn
from forge.agent.history.recall_archive import SessionArchive
from forge.agent.history.session_file import ResumedSession, SessionStore
from forge.agent.hooks.engine import Hooks
from forge.agent.hooks.session_hooks import SessionHooks
from forge.agent.mcp import McpServers
from forge.agent.mcp.deferral import ToolDeferral
from forge.agent.parts import AgentParts
from forge.agent.providers import make_provider, make_summarization_provider
from forge.agent.sandbox.sandbox import command_sandbox
from forge.agent.skills.listing import estimate_tokens
from forge.agent.skills.session_setup import session_skills
from forge.agent.subagents.definitions import load_agent_definitions
from forge.agent.subagents.run import Subagents
from forge.agent.system_prompt import build_system_prompt, session_date
from forge.agent.tools.background import BackgroundCommands
from forge.agent.tools.background_records import BackgroundRecords, reap_stale, take_resumed
from forge.agent.tools.background_tools import CommandOutputTool, CommandStopTool
from forge.agent.tools.recall import RecallTool
from forge.agent.tools.registry import default_registry
from forge.agent.tools.skill import SkillTool
from forge.agent.tools.task import TaskTool
from forge.agent.tools.web_fetch import WebFetchTool
from forge.agent.trust import WorkspaceTrust
from forge.agent.turn.interruption import note_cut_off_turn
from forge.agent.turn.loop import Agent
from forge.agent.turn.turn_events import TurnEvents
from forge.config.ephemeral import is_ephemeral
from forge.config.settings import Settings
from forge.context.conversation import Conversation
from forge.llm.tokenizer import TiktokenCounter
from forge.session.children import SessionChildren
from forge.session.core import Session
from forge.session.parts import (
    make_manager,
    make_window_tracker,
    secrets_of,
    summary_dir,
    window_tokens,
)


def build_session(
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
    no_hooks: bool = False,
) -> Session:
    """A session for `workspace`: a new one, or the one named `session_id`, or (with
    `resume_latest`) the latest of this workspace when there is one, or `resumed`, a session
    the caller has already read (`SessionStore.open_resumed`; the TUI shows its history first).

    Raises `SessionNotFoundError` for an unknown `session_id`, ValueError for a malformed one.
    `ask_user=False` (headless) makes `ask_question` answer itself; `approve_all` approves
    every tool call (`--yes`); `mode` is the permission mode (default `tools.mode`);
    `trust_workspace` trusts the workspace's own definitions for this run (`--trust-workspace`),
    else the stored decision counts (docs/adr/0034); `no_hooks` runs no hook (`forge run
    --no-hooks`; docs/adr/0043).
    """
    workspace = workspace.expanduser().resolve()
    store = store or SessionStore()
    trust = WorkspaceTrust(
        workspace, trusted_for_run=trust_workspace, env_allowlist=settings.trust.env_allowlist
    )
    mcp = McpServers(
        settings.mcp_servers, workspace, trust, limits=settings.mcp, sandbox=settings.tools.sandbox
    )
    redact = sorted({*secrets_of(settings), *mcp.secrets()})
    if resumed is None:
        # A unique start or end of an id is enough; the latest is found by its header line.
        resumed = store.open_resumed(workspace, session_id, resume_latest=resume_latest)
    if resumed is not None:
        conversation, log = resumed.conversation, resumed.log
        log.set_redactions(redact)
    else:
        log = store.create(workspace, settings.llm.model, redact=redact)
        conversation = Conversation()
    log.attach(conversation)
    if resumed is not None:
        # Recorded in the session like any change: the model hears that the turn was cut off.
        note_cut_off_turn(conversation)
    # A resumed session's cost and token counts go on from where they were.
    costs = CostLedger.from_record(log.costs) if log.costs is not None else CostLedger()
    turn_events = TurnEvents()  # made before the manager, which emits into it (ADR 0039)

    provider = make_provider(settings.llm)
    counter = TiktokenCounter(settings.llm.model)
    tracker = make_window_tracker(settings, provider)
    manager = make_manager(
        settings,
        provider,
        counter,
        summary_dir(store, log.id),
        tracker.current,
        costs.record_summary,  # summaries are costed too
        turn_events.emit,
    )
    skills = session_skills(  # the listing is fixed for the session (docs/adr/0046)
        workspace,
        log,
        window_tokens=window_tokens(tracker.current, settings.llm.model),
        count=estimate_tokens,  # the tokenizer loads after the first frame (ADR 0042)
        max_file_bytes=settings.skills.max_file_bytes,
        disabled=settings.skills.disabled,
        listing_share=settings.skills.listing_share,
        trust=trust,
        messages=conversation.messages,
    )
    registry = default_registry(readable=skills.catalog.readable_directories)
    registry.register(CommandOutputTool())
    registry.register(CommandStopTool())
    registry.register(RecallTool(SessionArchive(log.path)))
    registry.register(SkillTool(skills.catalog))
    registry.register(  # the page's answer to a `prompt` comes from the summarization model
        WebFetchTool(settings.tools.web_fetch, summarizer=manager.provider_for_summarization)
    )
    agent_problems: list[str] = []
    if settings.agents.enabled:  # the `task` tool lists the agents (docs/adr/0045)
        definitions = load_agent_definitions(
            workspace, max_file_bytes=settings.agents.max_file_bytes
        )
        agent_problems = definitions.problems
        registry.register(
            TaskTool((name, definitions.agents[name].description) for name in definitions.names())
        )
    tool_deferral = ToolDeferral(
        mcp,
        mode=settings.mcp.defer_tools,
        threshold=lambda: int(settings.mcp.defer_threshold * tracker.current.tokens),
        count_tools=counter.count_tools,
        record=log.record_tool_loading,
    )
    if log.tool_loading is not None:  # a resumed session keeps its decision and its loads
        tool_deferral.restore(log.tool_loading)
    # The prompt names the session's own tools; MCP tools (and `tool_search`) come and go.
    prompt_tools = registry.specs()
    registry.add_source(tool_deferral)
    summarization_provider = make_summarization_provider(settings.llm)
    manager.set_summarization_provider(summarization_provider)
    manager.set_tools(registry.specs())  # a resumed session's gauge is right before a request
    mcp.start()  # a no-op until an event loop runs; then the first turn starts them
    policy = ApprovalPolicy(
        auto_approve=settings.tools.auto_approve,
        command_allowlist=settings.tools.command_allowlist,
        approve_all=approve_all,
        mode=mode or settings.tools.mode,
        granted=skills.catalog.granted_tools,
    )
    checkpoints: CheckpointStore | None = None
    if not is_ephemeral():  # `forge run --ephemeral` keeps no checkpoints (nothing to rewind)
        remove_stale_temporaries(log.path.parent)  # left by a kill during a checkpoint write
        checkpoints = CheckpointStore(
            checkpoint_dir(log.path),
            workspace,
            max_bytes=settings.checkpoints.max_bytes,
            current=lambda: current_turn(conversation),
            on_restored=ledger.forget if (ledger := registry.read_ledger()) is not None else None,
        )
    hooks = SessionHooks(
        Hooks.load(settings, workspace, trust, no_hooks=no_hooks),
        log.id,
        str(log.path),
        workspace,
        mode=lambda: parts.policy.mode.value,  # the mode now, after any switch
        resumed=resumed is not None,
        no_hooks=no_hooks,
    )
    # What a Forge that died left running is ended now; a resumed session hears what it had.
    background_notices = [stale.describe() for stale in reap_stale()] if not is_ephemeral() else []
    if resumed is not None and (earlier := take_resumed(log.id)):
        names = ", ".join(f"{command.id} `{command.command}`" for command in earlier)
        background_notices.append(
            f"When this session stopped, background commands were running: {names}. "
            "They were ended and are not restarted."
        )
    background = BackgroundCommands(
        max_running=settings.tools.max_background,
        timeout=settings.tools.background_timeout,
        # `--ephemeral` leaves no file behind (the watchdog still ends them if Forge dies).
        records=None if is_ephemeral() else BackgroundRecords(log.id),
    )
    parts = AgentParts(
        provider,
        manager,
        policy,
        command_timeout=settings.tools.command_timeout,
        hooks=hooks,
        sandbox=command_sandbox(settings, workspace, skills.catalog.readable_directories),
        background=background,
    )
    children = SessionChildren(
        settings=settings,
        workspace=workspace,
        parts=parts,
        counter=counter,
        store=store,
        parent_log=log,
        window=tracker,
        summarization_provider=summarization_provider,
        mcp=tool_deferral,
        redact=redact,
    )
    agent = Agent(
        parts,
        registry,
        workspace,
        # A resumed session keeps the date it started on: the system prompt stays the same
        # bytes, so the provider's prompt cache still matches (docs/adr/0037).
        system_prompt=build_system_prompt(
            workspace,
            prompt_tools,
            interactive=ask_user,
            today=session_date(log.header),
            skills_listing=skills.listing,
        ),
        conversation=conversation,
        max_llm_calls=max_llm_calls,
        ask_user=ask_user,
        checkpoints=checkpoints,
        costs=costs,
        on_costs=lambda ledger: log.record_costs(ledger.to_record()),
        context_window=tracker,
        turn_events=turn_events,
        subagents=Subagents(workspace, children) if settings.agents.enabled else None,
        tool_deferral=tool_deferral,
    )
    return Session(
        settings=settings,
        workspace=workspace,
        parts=parts,
        counter=counter,
        registry=registry,
        store=store,
        log=log,
        agent=agent,
        window=tracker,
        mcp=mcp,
        trust=trust,
        summarization_provider=summarization_provider,
        children=children,
        agent_problems=agent_problems,
        skills=skills.catalog,
        skill_notices=list(skills.notices),
        background_notices=background_notices,
    )
