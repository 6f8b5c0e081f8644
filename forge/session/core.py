"""`Session`: the one owner of a running session's parts, and the verbs front ends use.

The front ends drive a session only through these verbs and views: `run_turn` (a message,
its `@` mentions expanded, on the session's model or one given for that turn), `compact`,
`list_models`, `apply_settings`, `set_mode`, the lifetime calls `start_background` and
`aclose`, and three roles: `history` (turns, `/undo`, `/rewind`; forge.session.history),
`reports` (cost, context, window, hooks, MCP; forge.session.reports) and `servers` (MCP
servers, hooks' loading and the trust→restart rule; forge.session.servers). Build one with
`forge.session.build.build_session`; see docs/adr/0041 and docs/adr/0059 part 4.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from forge.agent.approvals import ApprovalPolicy
from forge.agent.costs import CostLedger
from forge.agent.error_kinds import IMAGES_NOT_ACCEPTED_KIND
from forge.agent.events import (
    HOOK_FILE_PROBLEM,
    AgentEvent,
    ErrorEvent,
    HookWarning,
    TurnFinished,
)
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
from forge.config.settings import Settings
from forge.context.manager import Manager
from forge.llm.image_parts import ImagePart, attachment_line
from forge.llm.messages import Message, ToolCall
from forge.llm.tokenizer import TiktokenCounter
from forge.llm.window_discovery import ContextWindow, WindowTracker
from forge.session.events import AttachmentsAdded, SessionEvent
from forge.session.history import SessionHistory
from forge.session.parts import window_tokens
from forge.session.reports import SessionReports
from forge.session.servers import SessionServers
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
    mcp: InitVar[McpServers | None] = None
    """The session's MCP servers (held by `servers`)."""
    trust: InitVar[WorkspaceTrust | None] = None
    """Whether the workspace's own definitions may run (held by `servers`; docs/adr/0034)."""
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

    history: SessionHistory = field(init=False)
    """The recorded turns, `/undo`, `/rewind`, the session's name (forge.session.history)."""
    reports: SessionReports = field(init=False)
    """Cost, context, window, hooks and MCP reports (forge.session.reports)."""
    servers: SessionServers = field(init=False)
    """MCP servers, hooks' loading and the workspace's trust (forge.session.servers)."""

    def __post_init__(self, mcp: McpServers | None, trust: WorkspaceTrust | None) -> None:
        if self.window is not None:
            self.use_window(self.window)
        if mcp is not None:
            mcp.in_turn = lambda: self.turn_running
        self.history = SessionHistory(self.agent, self.log, self.registry, self.skills)
        self.servers = SessionServers(self, mcp, trust)
        self.reports = SessionReports(self)
        self.agent.refuse_images = self.image_refusal  # a tool's images (docs/adr/0055)

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
    def messages(self) -> Sequence[Message]:
        """The conversation, to show (a front end never changes it)."""
        return self.agent.conversation.messages

    @property
    def turn_running(self) -> bool:
        """Whether a turn (or a /compact run) is in progress."""
        return self.agent.turn_running

    @property
    def costs(self) -> CostLedger:
        """The session's tokens per model and kind of request (unpriced; see `reports.cost`)."""
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
        return expand_mentions(
            text,
            self.workspace,
            counter=self.counter,
            limit_tokens=limit,
            image_provider=self.settings.llm.provider,
        )

    def image_refusal(self, model: str | None = None) -> str | None:
        """Why images cannot go to `model` (the session's by default), from `llm.vision`
        and what is known of the model; None when they can (docs/adr/0055, part 2)."""
        from forge.llm.vision import vision_refusal

        return vision_refusal(model or self.settings.llm.model, self.settings.llm.vision)

    async def run_turn(
        self,
        text: str,
        *,
        model: str | None = None,
        typed: str | None = None,
        images: Sequence[ImagePart] = (),
    ) -> AsyncGenerator[SessionEvent, None]:
        """One turn for `text`: its `@` mentions are expanded first (in a thread; an
        `AttachmentsAdded` event comes first when there were any), then the agent's events.

        `model` (a custom command's) answers this turn only, on the session's server; the
        session's provider is never swapped, so the next turn uses the configured model
        however this one ends (an answer, an error, Esc). `typed`: what the user typed when
        `text` is what it expanded to (a skill or custom command); the session file keeps
        both, so a resumed chat shows what the user typed (docs/adr/0048). `images`: attached
        by the front end (`forge run --image`, an editor's image block), shown in the
        `AttachmentsAdded` line with those `@` attached; a model that does not take images
        ends the turn with an error before anything is sent (docs/adr/0055, part 2)."""
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
        attached = tuple(images)
        if has_mentions(text):
            expansion = await asyncio.to_thread(self.expand_mentions, text)
            attached += expansion.images
            if expansion.attachments or expansion.problems or attached:
                yield AttachmentsAdded(
                    tuple(attachment.describe() for attachment in expansion.attachments)
                    + tuple(attachment_line(image) for image in attached),
                    tuple(expansion.problems),
                )
            text = expansion.text
        elif attached:
            yield AttachmentsAdded(tuple(attachment_line(image) for image in attached), ())
        refusal = self.image_refusal(model) if attached else None
        if refusal is not None:  # not sent, not added to the conversation
            yield ErrorEvent(f"Not sent: {refusal}", IMAGES_NOT_ACCEPTED_KIND, fatal=True)
            yield TurnFinished("error")
            return
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
        # SessionStart's and UserPromptSubmit's cards, shown once resumed (docs/adr/0048)
        meta = with_notices({}, [*prompt.started, *prompt.events])
        if typed is not None and typed != original:
            meta |= {TYPED_KEY: typed, EXPANSION_KEY: original}
        elif text != original:  # hook context, attachments, an `@agent-` request added
            meta[TYPED_KEY] = original
        if not model or model == self.settings.llm.model:
            turn = self.agent.run_turn(text, required_tool=required, meta=meta, images=attached)
            async for event in turn:
                yield event
            return
        provider = make_provider(self.settings.llm.model_copy(update={"model": model}))
        try:
            turn = self.agent.run_turn(
                text, provider=provider, required_tool=required, meta=meta, images=attached
            )
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

    async def start_trusted_hooks(self) -> AsyncGenerator[AgentEvent, None]:
        """After the workspace was trusted before the first prompt: SessionStart's hooks of
        the project files that were not trusted as the session started, and their notices."""
        hooks = self.parts.hooks
        started = hooks.start_trusted() if hooks is not None else None
        if started is not None:
            for event in await asyncio.shield(started):
                yield event

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
        self.servers.start()
        if self.window is not None:
            self.window.start()  # a session built off the loop (the TUI's) has not asked yet

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
        await self.servers.aclose()
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
