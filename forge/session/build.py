"""Settings in, a ready `Session` out: every part made, then given at construction.

`build_session` runs named steps — the workspace's gates (trust, MCP servers), the session's
record (new or resumed), the conversation's parts (provider, tokenizer, window, context
manager), the skills, the tools, the approval policy, the checkpoints, the agent's parts
(hooks, sandbox), the children and the agent — and hands each part to what uses it when that
is built: nothing is wired afterwards (docs/adr/0041-session-api.md, docs/adr/0059 part 4).
How the session starts (resumed or new, who answers questions, the mode, trust for the run,
hooks off) is one `SessionOptions` value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from forge.agent.approvals import ApprovalPolicy
from forge.agent.costs import CostLedger
from forge.agent.history.checkpoint_cleanup import remove_stale_temporaries
from forge.agent.history.checkpoints import CheckpointStore, checkpoint_dir, current_turn
from forge.agent.history.recall_archive import SessionArchive
from forge.agent.history.session_file import ResumedSession, SessionLog, SessionStore
from forge.agent.hooks.engine import Hooks
from forge.agent.hooks.session_hooks import SessionHooks
from forge.agent.mcp import McpServers
from forge.agent.mcp.deferral import ToolDeferral
from forge.agent.parts import AgentParts
from forge.agent.providers import AnyProvider, make_provider, make_summarization_provider
from forge.agent.sandbox.sandbox import command_sandbox
from forge.agent.skills.listing import estimate_tokens
from forge.agent.skills.session_setup import SessionSkills, session_skills
from forge.agent.subagents.definitions import load_agent_definitions
from forge.agent.subagents.run import Subagents
from forge.agent.system_prompt import build_system_prompt, session_date
from forge.agent.tools.background import BackgroundCommands
from forge.agent.tools.background_records import BackgroundRecords, reap_stale, take_resumed
from forge.agent.tools.background_tools import CommandOutputTool, CommandStopTool
from forge.agent.tools.recall import RecallTool
from forge.agent.tools.registry import ToolRegistry, default_registry
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
from forge.context.manager import Manager
from forge.llm.anthropic_wire import supports_tool_search
from forge.llm.protocols import ToolSpec
from forge.llm.tokenizer import TiktokenCounter
from forge.llm.window_discovery import WindowTracker
from forge.session.children import SessionChildren
from forge.session.core import Session
from forge.session.parts import (
    make_manager,
    make_window_tracker,
    secrets_of,
    summary_dir,
    window_tokens,
)


@dataclass(frozen=True)
class SessionOptions:
    """How a session starts, beside its settings and workspace (every field has the
    interactive default: a new session, questions asked, the configured mode)."""

    session_id: str | None = None
    """Resume the session with this id (a unique start or end of one is enough)."""
    resume_latest: bool = False
    """Resume the latest session of the workspace when there is one (`--continue`)."""
    resumed: ResumedSession | None = None
    """A session the caller has already read (`SessionStore.open_resumed`; the TUI shows its
    history first)."""
    ask_user: bool = True
    """False (headless): `ask_question` answers itself."""
    approve_all: bool = False
    """Approve every tool call (`--yes`)."""
    mode: str | None = None
    """The permission mode (default `tools.mode`)."""
    max_llm_calls: int = 50
    """LLM requests a turn may make."""
    trust_workspace: bool = False
    """Trust the workspace's own definitions for this run (`--trust-workspace`), else the
    stored decision counts (docs/adr/0034)."""
    no_hooks: bool = False
    """Run no hook (`forge run --no-hooks`; docs/adr/0043)."""
    store: SessionStore | None = None
    """Where session files live (default: the user's data directory)."""


@dataclass(frozen=True)
class _Record:
    """The session's file and conversation, new or resumed."""

    log: SessionLog
    conversation: Conversation
    resumed: bool


@dataclass(frozen=True)
class _ConversationParts:
    """What talks to the model and keeps its prompt in budget."""

    provider: AnyProvider
    counter: TiktokenCounter
    window: WindowTracker
    manager: Manager
    summarization_provider: AnyProvider | None


@dataclass(frozen=True)
class _Tools:
    """The registry, the tools the system prompt names, MCP tools' deferral, and the agent
    definitions that could not be used."""

    registry: ToolRegistry
    prompt_tools: list[ToolSpec]
    deferral: ToolDeferral
    agent_problems: list[str]


def build_session(
    settings: Settings, workspace: Path, options: SessionOptions | None = None
) -> Session:
    """A session for `workspace`: a new one, or the one `options` names (`session_id`,
    `resume_latest`, `resumed`), started as `options` says.

    Raises `SessionNotFoundError` for an unknown `session_id`, ValueError for a malformed one.
    """
    options = options or SessionOptions()
    workspace = workspace.expanduser().resolve()
    store = options.store or SessionStore()
    trust, mcp = _workspace_gates(settings, workspace, options)
    redact = sorted({*secrets_of(settings), *mcp.secrets()})
    record = _open_record(settings, workspace, store, options, redact)
    log, conversation = record.log, record.conversation
    # A resumed session's cost and token counts go on from where they were.
    costs = CostLedger.from_record(log.costs) if log.costs is not None else CostLedger()
    turn_events = TurnEvents()  # made before the manager, which emits into it (ADR 0039)
    model = _conversation_parts(settings, store, log, costs, turn_events)
    skills = session_skills(  # the listing is fixed for the session (docs/adr/0046)
        workspace,
        log,
        window_tokens=window_tokens(model.window.current, settings.llm.model),
        count=estimate_tokens,  # the tokenizer loads after the first frame (ADR 0042)
        max_file_bytes=settings.skills.max_file_bytes,
        disabled=settings.skills.disabled,
        listing_share=settings.skills.listing_share,
        trust=trust,
        messages=conversation.messages,
    )
    tools = _tools(settings, workspace, log, model, skills, mcp)
    mcp.start()  # a no-op until an event loop runs; then the first turn starts them
    policy = ApprovalPolicy(
        auto_approve=settings.tools.auto_approve,
        command_allowlist=settings.tools.command_allowlist,
        approve_all=options.approve_all,
        mode=options.mode or settings.tools.mode,
        granted=skills.catalog.granted_tools,
    )
    background, background_notices = _background(settings, record)
    parts = _agent_parts(
        settings, workspace, record, model, policy, skills, trust, options, background
    )
    children = SessionChildren(
        settings=settings,
        workspace=workspace,
        parts=parts,
        counter=model.counter,
        store=store,
        parent_log=log,
        window=model.window,
        summarization_provider=model.summarization_provider,
        mcp=tools.deferral,
        redact=redact,
    )
    agent = Agent(
        parts,
        tools.registry,
        workspace,
        # A resumed session keeps the date it started on: the system prompt stays the same
        # bytes, so the provider's prompt cache still matches (docs/adr/0037).
        system_prompt=build_system_prompt(
            workspace,
            tools.prompt_tools,
            interactive=options.ask_user,
            today=session_date(log.header),
            skills_listing=skills.listing,
        ),
        conversation=conversation,
        max_llm_calls=options.max_llm_calls,
        ask_user=options.ask_user,
        checkpoints=_checkpoints(settings, workspace, log, conversation, tools.registry),
        costs=costs,
        on_costs=lambda ledger: log.record_costs(ledger.to_record()),
        context_window=model.window,
        turn_events=turn_events,
        subagents=Subagents(workspace, children) if settings.agents.enabled else None,
        tool_deferral=tools.deferral,
    )
    return Session(
        settings=settings,
        workspace=workspace,
        parts=parts,
        counter=model.counter,
        registry=tools.registry,
        store=store,
        log=log,
        agent=agent,
        window=model.window,
        mcp=mcp,
        trust=trust,
        summarization_provider=model.summarization_provider,
        children=children,
        agent_problems=tools.agent_problems,
        skills=skills.catalog,
        skill_notices=list(skills.notices),
        background_notices=background_notices,
    )


def _workspace_gates(
    settings: Settings, workspace: Path, options: SessionOptions
) -> tuple[WorkspaceTrust, McpServers]:
    """The workspace's trust (the stored decision, or trusted for the run) and the MCP
    servers it lets start (the user's, and `.forge/mcp.yaml`'s when trusted)."""
    trust = WorkspaceTrust(
        workspace,
        trusted_for_run=options.trust_workspace,
        env_allowlist=settings.trust.env_allowlist,
    )
    mcp = McpServers(
        settings.mcp_servers, workspace, trust, limits=settings.mcp, sandbox=settings.tools.sandbox
    )
    return trust, mcp


def _open_record(
    settings: Settings,
    workspace: Path,
    store: SessionStore,
    options: SessionOptions,
    redact: list[str],
) -> _Record:
    """The session file: the resumed one (its conversation read back, a cut-off turn noted)
    or a new one; either way attached to the conversation it records."""
    resumed = options.resumed
    if resumed is None:
        # A unique start or end of an id is enough; the latest is found by its header line.
        resumed = store.open_resumed(
            workspace, options.session_id, resume_latest=options.resume_latest
        )
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
    return _Record(log, conversation, resumed is not None)


def _conversation_parts(
    settings: Settings,
    store: SessionStore,
    log: SessionLog,
    costs: CostLedger,
    turn_events: TurnEvents,
) -> _ConversationParts:
    """The provider, the tokenizer, the window tracker, the summarization provider and the
    context manager that uses them (summaries costed, its events into the turn's router)."""
    provider = make_provider(settings.llm)
    counter = TiktokenCounter(settings.llm.model, image_provider=settings.llm.provider)
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
    summarization_provider = make_summarization_provider(settings.llm)
    manager.set_summarization_provider(summarization_provider)
    return _ConversationParts(provider, counter, tracker, manager, summarization_provider)


def _tools(
    settings: Settings,
    workspace: Path,
    log: SessionLog,
    model: _ConversationParts,
    skills: SessionSkills,
    mcp: McpServers,
) -> _Tools:
    """The session's tools: the defaults, recall, skills, web fetch, `task` when subagents
    are on, and MCP tools behind their deferral (a resumed session keeps its loads)."""
    registry = default_registry(readable=skills.catalog.readable_directories)
    registry.register(CommandOutputTool())
    registry.register(CommandStopTool())
    registry.register(RecallTool(SessionArchive(log.path)))
    registry.register(SkillTool(skills.catalog))
    registry.register(  # the page's answer to a `prompt` comes from the summarization model
        WebFetchTool(settings.tools.web_fetch, summarizer=model.manager.provider_for_summarization)
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
    window = model.window
    deferral = ToolDeferral(
        mcp,
        mode=settings.mcp.defer_tools,
        threshold=lambda: int(settings.mcp.defer_threshold * window.current.tokens),
        count_tools=model.counter.count_tools,
        record=log.record_tool_loading,
        native=lambda: (
            settings.llm.provider == "anthropic" and supports_tool_search(settings.llm.model)
        ),
    )
    if log.tool_loading is not None:  # a resumed session keeps its decision and its loads
        deferral.restore(log.tool_loading)
    # The prompt names the session's own tools; MCP tools (and `tool_search`) come and go.
    prompt_tools = registry.specs()
    registry.add_source(deferral)
    model.manager.set_tools(registry.specs())  # a resumed session's gauge is right at once
    return _Tools(registry, prompt_tools, deferral, agent_problems)


def _checkpoints(
    settings: Settings,
    workspace: Path,
    log: SessionLog,
    conversation: Conversation,
    registry: ToolRegistry,
) -> CheckpointStore | None:
    """The files' checkpoints beside the session file; none with `forge run --ephemeral`
    (nothing to rewind)."""
    if is_ephemeral():
        return None
    remove_stale_temporaries(log.path.parent)  # left by a kill during a checkpoint write
    ledger = registry.read_ledger()
    return CheckpointStore(
        checkpoint_dir(log.path),
        workspace,
        max_bytes=settings.checkpoints.max_bytes,
        current=lambda: current_turn(conversation),
        on_restored=ledger.forget if ledger is not None else None,
    )


def _agent_parts(
    settings: Settings,
    workspace: Path,
    record: _Record,
    model: _ConversationParts,
    policy: ApprovalPolicy,
    skills: SessionSkills,
    trust: WorkspaceTrust,
    options: SessionOptions,
    background: BackgroundCommands,
) -> AgentParts:
    """The parts the agent reads and a settings switch replaces: provider, context manager,
    policy, command timeout, the session's hooks, the commands' sandbox and the background
    commands."""
    hooks = SessionHooks(
        Hooks.load(settings, workspace, trust, no_hooks=options.no_hooks),
        record.log.id,
        str(record.log.path),
        workspace,
        mode=lambda: parts.policy.mode.value,  # the mode now, after any switch
        resumed=record.resumed,
        no_hooks=options.no_hooks,
    )
    parts = AgentParts(
        model.provider,
        model.manager,
        policy,
        command_timeout=settings.tools.command_timeout,
        hooks=hooks,
        sandbox=command_sandbox(settings, workspace, skills.catalog.readable_directories),
        background=background,
    )
    return parts


def _background(settings: Settings, record: _Record) -> tuple[BackgroundCommands, list[str]]:
    """The session's background commands (docs/adr/0057), and what to tell at start: what a
    Forge that died left running is ended now; a resumed session hears what it had."""
    log = record.log
    notices = [stale.describe() for stale in reap_stale()] if not is_ephemeral() else []
    if record.resumed and (earlier := take_resumed(log.id)):
        names = ", ".join(f"{command.id} `{command.command}`" for command in earlier)
        notices.append(
            f"When this session stopped, background commands were running: {names}. "
            "They were ended and are not restarted."
        )
    background = BackgroundCommands(
        max_running=settings.tools.max_background,
        timeout=settings.tools.background_timeout,
        # `--ephemeral` leaves no file behind (the watchdog still ends them if Forge dies).
        records=None if is_ephemeral() else BackgroundRecords(log.id),
    )
    return background, notices
