"""The Forge app: the main screen, the agent-turn worker, and the handlers that route events.

Threading model (ADR 0016): one async worker per turn (group "agent-turn") iterates the
agent's events and only posts messages; handlers here route each message to the widget that
owns that region. Approvals and questions arrive as messages carrying a future, answered by a
dialog worker through `push_screen_wait`.

Start-up order (ADR 0016): this module imports only Textual and light Forge modules, so the
first frame shows at once; the settings, the provider (httpx) and the tokenizer are loaded by
a thread worker started after that frame, which posts `RuntimeLoaded`. Input that arrives
before then waits for it.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.widgets import Footer, Input, TextArea

from forge.agent.events import (
    AgentEvent,
    ContextWarning,
    ErrorEvent,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizerDisabled,
)
from forge.tui.command_table import ParsedCommand, SlashCommand
from forge.tui.commands import SlashCommandProvider, SlashCommandRunner
from forge.tui.compaction import CompactionTracker, is_skip, plain_failure
from forge.tui.config_problem import (
    config_reloaded,
    config_still_unreadable,
    not_sent_text,
    show_start_report,
)
from forge.tui.delta_batching import batch_deltas
from forge.tui.dialog_flows import DialogFlows
from forge.tui.input_flows import (
    AttachmentsShown,
    run_user_command,
    show_attachments,
    turn_events,
)
from forge.tui.mcp_notices import McpNoticeArrived, McpSessionWatch
from forge.tui.messages import (
    AgentEventArrived,
    RuntimeLoaded,
    StartupFailed,
    TurnEnded,
    message_for_event,
)
from forge.tui.retry_notices import RetryScheduled, RetryWatcher
from forge.tui.safe_notify import SafeNotifications
from forge.tui.session_controls import MODE_KEY, cycle_mode, session_state
from forge.tui.widgets.chat import ChatView
from forge.tui.widgets.chat_blocks import NoticeBlock, UserMessageBlock
from forge.tui.widgets.config_banner import ConfigProblemBanner
from forge.tui.widgets.formatting import display_path
from forge.tui.widgets.header import ForgeHeader
from forge.tui.widgets.prompt_input import PromptArea, PromptInput
from forge.tui.widgets.status import StatusPane
from forge.tui.widgets.welcome import (
    KEY_ADDED,
    needs_api_key,
)

if TYPE_CHECKING:
    # Heavy imports (pydantic-settings, httpx, tiktoken), loaded after the first frame.
    from forge.agent.runtime import Runtime
    from forge.config.settings import Settings
    from forge.config.store import ConfigStore
    from forge.tui.history_preview import HeldLogRecords, SessionPreview
    from forge.tui.reload import ConfigReloadController

QUIT_CONFIRM_SECONDS = 2.0
"""A second Ctrl+C within this many seconds quits."""


class ForgeApp(SafeNotifications, DialogFlows):
    """Forge's full-screen UI over one `Runtime` (agent, context manager, provider)."""

    CSS_PATH = "app.tcss"
    TITLE = "Forge"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    """Below 110 columns the status pane narrows (app.tcss), leaving the chat room to read."""
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    """Below 32 rows the status pane drops its least urgent lines (app.tcss), so a running
    summarization's progress stays in view under a plan."""
    COMMANDS = App.COMMANDS | {SlashCommandProvider}
    BINDINGS = [
        Binding("ctrl+c", "interrupt_or_quit", "Interrupt/quit", priority=True),
        Binding("escape", "interrupt", "Interrupt"),
        # Most terminals cannot send Ctrl+, (it needs the kitty keyboard protocol): F2 works
        # everywhere and is the one the footer shows.
        Binding("f2", "open_settings", "Settings"),
        Binding("ctrl+comma", "open_settings", "Settings", show=False),
        Binding("f1", "help", "Help"),
        Binding(MODE_KEY, "cycle_mode", "Mode"),
    ]

    busy: var[bool] = var(False, toggle_class="-busy")
    """A turn or a /compact run is in progress."""

    def __init__(
        self,
        *,
        workspace: Path,
        runtime: Runtime | None = None,
        store: ConfigStore | None = None,
        session_id: str | None = None,
        resume_latest: bool = False,
    ) -> None:
        """With `runtime` and `store`, start on them; without, load both in a worker after
        the first frame (the session `session_id`, or the latest one with `resume_latest`)."""
        super().__init__()
        self.workspace = workspace
        self._session_choice = (session_id, resume_latest)
        self.runtime_ready = asyncio.Event()
        """Set once the runtime (settings, provider, tokenizer, session) is loaded."""
        self._preview: SessionPreview | None = None
        self._held_logs: HeldLogRecords | None = None
        self._waiting_for_runtime: list[Callable[[], Any]] = []
        self.retry_watcher = RetryWatcher(self)
        self._retry_notice: NoticeBlock | None = None
        """This turn's "retrying in…" line in the chat, updated in place."""
        self.queued: list[tuple[str, UserMessageBlock]] = []
        self.commands_runner = SlashCommandRunner(self)
        self.mcp_watch = McpSessionWatch(self)
        self.compaction: CompactionTracker | None = None
        """The /compact in progress, if any (its chat line is closed when it ends)."""
        self.inputs_handled = 0
        """Prompt submissions fully handled (shown, queued, command run or turn started)."""
        self._warned_this_turn = False
        self._queued_returned_to_prompt = False
        self._last_interrupt_key = -QUIT_CONFIRM_SECONDS
        # Shown until the settings are loaded (a fraction of a second).
        self.header = ForgeHeader(display_path(workspace), "…", "")
        self.chat = ChatView(id="chat")
        self.status = StatusPane(
            summarization_model="…", warning_threshold=0.7, critical_threshold=0.85, id="status"
        )
        self.status.session_source = lambda: session_state(self)
        if runtime is not None and store is not None:
            self._use_runtime(runtime, store)

    def _use_runtime(self, runtime: Runtime, store: ConfigStore) -> None:
        from forge.tui.reload import ConfigReloadController

        self.runtime = runtime
        self.config_store = store
        self.settings: Settings = runtime.settings
        self.reload_controller = ConfigReloadController(app=self, store=store, runtime=runtime)
        llm = self.settings.llm
        self.apply_theme(self.settings.ui.theme)
        self.header.show_models(llm.model, llm.summarization_model)
        self.chat.show_reasoning = self.settings.ui.show_reasoning
        self.status.summarization.set_model(llm.effective_summarization_model)
        context = self.settings.context
        self.status.gauge.set_thresholds(context.warning_threshold, context.auto_summary_threshold)

    def compose(self) -> ComposeResult:
        yield self.header
        with Horizontal(id="body"):
            with Vertical(id="main"):
                yield ConfigProblemBanner(id="config-problem")
                yield self.chat
                yield PromptArea(id="prompt-area")
            yield self.status
        yield Footer()

    @property
    def prompt(self) -> PromptInput:
        """The input the user types into."""
        return self.query_one(PromptInput)

    async def on_mount(self) -> None:
        # Focus first: keys typed as soon as the screen shows must land in the prompt.
        self.prompt.focus()
        self.retry_watcher.install()
        if hasattr(self, "runtime"):
            await self._start_session()
        else:
            self.status.show_activity("starting…")
            if self._session_choice != (None, False):
                # A resumed session's newest rows are its first frame (docs/adr/0032).
                from forge.tui.history_preview import show_preview

                self._held_logs, self._preview = await show_preview(self, *self._session_choice)
            # After the first frame: the loading must not delay it.
            self.call_after_refresh(self.load_runtime)

    @work(thread=True, exclusive=True, group="startup", exit_on_error=False)
    def load_runtime(self) -> None:
        """Load the config and build the runtime (provider, tokenizer, session) in a thread;
        posts `RuntimeLoaded`, or `StartupFailed` for an unknown or malformed session id."""
        from forge.agent.logs import configure_file_logging
        from forge.agent.runtime import build_runtime, secrets_of
        from forge.agent.sessions import SessionNotFoundError
        from forge.config.store import ConfigStore

        session_id, resume_latest = self._session_choice
        store = ConfigStore()
        settings = store.current.settings
        # Log to the file: anything written to the terminal would tear through the UI.
        configure_file_logging(secrets_of(settings, store.current.file_data))
        if self._held_logs is not None:
            self._held_logs.release()
        try:
            runtime = build_runtime(
                settings,
                self.workspace,
                session_id=session_id,
                resume_latest=resume_latest,
                resumed=self._preview.resumed if self._preview is not None else None,
            )
        except (SessionNotFoundError, ValueError) as error:
            self.post_message(StartupFailed(str(error)))
            return
        # The tokenizer loads after this, off the loop (`count_context`; docs/adr/0042).
        self.post_message(RuntimeLoaded(runtime, store))

    async def on_runtime_loaded(self, message: RuntimeLoaded) -> None:
        self._use_runtime(message.runtime, message.store)
        self.status.show_activity("")
        await self._start_session()

    def _start_background(self) -> None:
        """What runs while the user types: the file watchers (their first use imports anyio's
        backend, ~0.15 s), MCP, asking for the context window, the tokenizer and the gauge."""
        self.reload_controller.start()
        self.mcp_watch.attach(self.runtime)  # notices in the chat; .forge/mcp.yaml watched
        self.runtime.start_background()
        self.count_context()

    @work(exclusive=True, group="context-count", exit_on_error=False)
    async def count_context(self) -> None:
        """Load the tokenizer and count the conversation off the loop, then show the gauge
        (docs/adr/0042)."""
        await self.runtime.context_manager.count_ahead(self.runtime.agent.conversation)
        self.refresh_context_gauge()

    def on_startup_failed(self, message: StartupFailed) -> None:
        self.exit(2, return_code=2, message=f"forge: {message.error}")

    def when_runtime_ready(self, callback: Callable[[], Any]) -> None:
        """Run `callback` now if the runtime is loaded, else as soon as it is (in order)."""
        if self.runtime_ready.is_set():
            self.call_later(callback)
        else:
            self._waiting_for_runtime.append(callback)

    async def _start_session(self) -> None:
        history = self.runtime.agent.conversation.messages
        if any(message.role == "user" for message in history):
            await self.chat.show_history(history)
            await self.chat.add_notice(f"Resumed session `{self.runtime.session_id}`.")
            # Counted off the loop, not by the notice's count on it (ADR 0036).
            await self.runtime.context_manager.count_ahead(self.runtime.agent.conversation)
            await self._say_recache_cost()
        await show_start_report(self, self.config_store.current)
        await self.commands_runner.load_custom_commands()
        # Once the ready hint is drawn (docs/adr/0042); a task may start before: its turn
        # starts what it needs itself.
        self.refresh_session_status()  # the gauge once the tokenizer is in (count_context)
        self.call_after_refresh(self._start_background)
        self.runtime_ready.set()
        waiting, self._waiting_for_runtime = self._waiting_for_runtime, []
        for callback in waiting:
            result = callback()
            if inspect.isawaitable(result):
                await result

    async def on_unmount(self) -> None:
        self.retry_watcher.uninstall()
        if hasattr(self, "runtime"):
            await self.runtime.aclose()

    # --- input ---------------------------------------------------------------------------------
    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        if not self.runtime_ready.is_set():
            # Typed during start-up: handled, in order, once the runtime is loaded.
            self._waiting_for_runtime.append(lambda: self.on_prompt_input_submitted(message))
            return
        try:
            await self._handle_input(message.text)
        finally:
            self.inputs_handled += 1

    async def _handle_input(self, text: str) -> None:
        if text.startswith("!"):  # the user's own shell command (ADR 0030)
            await run_user_command(self, text)
            return
        if await self.commands_runner.run_text(text):
            return
        if text.lstrip().startswith("//"):
            text = text.lstrip()[1:]
        await self.send_user_message(text)

    async def send_user_message(self, text: str, model: str = "") -> None:
        """Show `text` as the user's message and run a turn for it (queued while one runs);
        with `model`, that one turn runs on it (a custom command's front matter)."""
        if needs_api_key(self.settings):
            await self.chat.add_user_message(text)
            await self.chat.add_notice(not_sent_text(self), kind="error")
            return
        if self.busy:
            block = await self.chat.add_user_message(text, queued=True)
            self.queued.append((text, block))
            self._show_activity()
            return
        await self.chat.add_user_message(text)
        self.start_turn(text, model)

    def start_turn(self, text: str, model: str = "") -> None:
        """Run one agent turn for `text` in the turn worker (on `model` when given); its `@`
        mentions attach files (ADR 0030)."""
        self.busy = True
        self._warned_this_turn = False
        self._show_activity()
        self.run_events(turn_events(self, self.runtime, text, model))

    async def on_attachments_shown(self, message: AttachmentsShown) -> None:
        await show_attachments(self.chat, message)

    def start_compaction(self, instructions: str, notice: NoticeBlock) -> None:
        """Run `/compact` in the turn worker (its events render like a turn's); `notice` is
        the chat line that announced it, closed with the outcome when the run ends."""
        self.busy = True
        self.compaction = CompactionTracker(notice, instructions)
        self._show_activity("compacting…")
        self.run_events(self.runtime.agent.compact(instructions))

    def invoke_slash_command(self, command: SlashCommand) -> None:
        """From the command palette: run `command`, or start typing it when it needs an
        argument."""
        if command.argument_required:
            self.prompt.load_text(f"/{command.name} ")
            self.prompt.move_cursor(self.prompt.document.end)
            self.prompt.focus()
            return
        parsed = ParsedCommand(command.name, "", command)
        self.when_runtime_ready(lambda: self.commands_runner.run(parsed))

    # --- the turn worker -----------------------------------------------------------------------
    @work(exclusive=True, group="agent-turn", exit_on_error=False)
    async def run_events(self, events: AsyncIterator[AgentEvent]) -> None:
        """Iterate the agent's events and post each as a message; never touches a widget.

        Always ends by posting `TurnEnded`, whether the events ran out, the worker was
        cancelled (interrupt) or the agent raised.
        """
        reason, error = "completed", ""
        unsent: list[AgentEvent] = []
        try:
            # Streamed text goes out in ~30 ms batches, not one message per token.
            async with (
                aclosing(events),  # type: ignore[type-var]
                aclosing(batch_deltas(events, unsent=unsent)) as batched,
            ):
                async for event in batched:
                    self.post_message(message_for_event(event))
        except asyncio.CancelledError:
            reason = "cancelled"
            for event in unsent:  # the text the interrupted answer keeps, shown as kept
                self.post_message(message_for_event(event))
            raise
        except Exception as exception:
            reason, error = "error", str(exception) or type(exception).__name__
        finally:
            self.post_message(TurnEnded(reason, error))

    async def on_retry_scheduled(self, message: RetryScheduled) -> None:
        text = f"Model `{message.model}`: {message.describe()}…"
        if self.busy:
            self._show_activity(f"{message.describe()}…")
        if self._retry_notice is None:
            self._retry_notice = await self.chat.add_notice(text)
        else:
            await self._retry_notice.set_text(text)

    def _summaries_turned_off(self) -> bool:
        """Whether a permanent error turned LLM summaries off for the session (ADR 0024)."""
        breaker = getattr(self.runtime.context_manager, "breaker", None)
        return breaker is not None and breaker.disabled is not None

    async def on_agent_event_arrived(self, message: AgentEventArrived) -> None:
        if self.return_code is not None:
            return  # exiting: nothing more is shown (the session file has it all)
        event = message.event
        if self._retry_notice is not None and self.busy and self.compaction is None:
            self._show_activity()  # the retry went through: back to "working…"
        if self.compaction is not None:
            self.compaction.record(event)
        if not (self.compaction is not None and isinstance(event, ErrorEvent)):
            # A /compact error is told once, in the line that closes the compaction.
            await self.chat.show_event(event)
        self.status.show_event(event)
        if isinstance(event, SummarizerDisabled):
            self.header.summaries_off = event.model
        if (
            isinstance(event, SummarizationFailed)
            and not is_skip(event)
            and self.compaction is None  # a /compact tells it in its closing line
            and not self._summaries_turned_off()  # its one "Summaries are off" notice tells it
        ):
            await self.chat.add_notice(plain_failure(event), kind="error")
        if isinstance(event, SummarizationCompleted) and event.strategy in QUIET_STRATEGIES:
            # Masking runs every few tool calls: the status pane shows it, the chat stays calm.
            self.chat.remember_summaries(self.runtime.agent.conversation.messages)
            if event.strategy == "ingest_cap" and event.items:
                cut = max(0, event.tokens_before - event.tokens_after)
                await self.chat.add_notice(
                    f"A long tool output was cut to its head and tail to fit the context "
                    f"(saved {cut:,} tokens); the model can read the rest by line range.",
                    kind="info",
                )
        elif isinstance(event, SummarizationCompleted | SummarizationFailed):
            saved = event.tokens_before - event.tokens_after if event.tokens_before else None
            await self.chat.show_new_summaries(
                self.runtime.agent.conversation.messages,
                strategy=event.strategy,
                tokens_saved=saved,
            )
        elif isinstance(event, ContextWarning) and not self._warned_this_turn:
            # Once per turn: usage can cross the line before every call of a long turn, and
            # the gauge already shows it in colour.
            self._warned_this_turn = True
            self.notify(
                f"Context at {event.current_tokens / max(event.max_tokens, 1):.0%} of the budget",
                severity="warning",
            )

    async def on_mcp_notice_arrived(self, message: McpNoticeArrived) -> None:
        await self.chat.add_notice(message.text, kind=message.kind)

    async def on_turn_ended(self, message: TurnEnded) -> None:
        if self.return_code is not None:
            return  # exiting (a signal, Ctrl+C twice): the chat is being taken down
        compaction, self.compaction = self.compaction, None
        self._retry_notice = None
        if compaction is None:
            if message.reason == "cancelled":
                await self.chat.show_calls_not_run(self.runtime.agent.conversation.messages)
            await self.chat.end_turn(
                message.reason, message.error, queued=self._queued_returned_to_prompt
            )
        else:
            await self.chat.end_turn("completed")  # the compaction line tells how it ended
            await compaction.close(message.reason, message.error)
            # The outcome line goes after the summary block the run added, not above it.
            if self.chat.children and compaction.notice is not self.chat.children[-1]:
                self.chat.move_child(compaction.notice, after=self.chat.children[-1])
        self._queued_returned_to_prompt = False
        self.status.summarization.interrupted()
        self._dismiss_dialogs()
        self.refresh_context_gauge()
        self.busy = False
        if self.queued and message.reason != "cancelled":
            text, block = self.queued.pop(0)
            block.set_queued(False)
            self.start_turn(text)
        self._show_activity()

    async def new_session(self, session_id: str | None = None) -> None:
        """Replace the runtime with a fresh one (new conversation and session file), or with
        the saved session `session_id`."""
        from forge.agent.runtime import build_runtime

        old = self.runtime
        self.runtime = build_runtime(self.settings, self.workspace, session_id=session_id)
        self.runtime.policy.mode = old.policy.mode  # the mode the user chose stays
        self.reload_controller.runtime = self.runtime
        self.mcp_watch.attach(self.runtime)
        await old.aclose()
        self.queued.clear()
        await self.chat.clear_chat()
        await self.commands_runner.load_custom_commands()  # a new session re-reads the files
        self.status.reset_session()
        self.refresh_context_gauge()

    async def resume_session(self, session_id: str) -> None:
        """Switch to the saved session `session_id`, its history shown in the chat."""
        await self.new_session(session_id)
        await self.chat.show_history(self.runtime.agent.conversation.messages)
        await self.chat.add_notice(f"Resumed session `{self.runtime.session_id}`.")
        await self._say_recache_cost()
        self.refresh_context_gauge()

    async def _say_recache_cost(self) -> None:
        """Before the first request of a resumed session: what re-caching its prompt costs,
        when the provider's prompt cache has expired (docs/adr/0037)."""
        from forge.agent.cache_expiry import runtime_recache_notice

        if notice := runtime_recache_notice(self.runtime):
            await self.chat.add_notice(notice)

    def refresh_context_gauge(self) -> None:
        """Show the context manager's current view of the prompt size."""
        manager = self.runtime.context_manager
        conversation = self.runtime.agent.conversation
        self.status.gauge.show(manager.current_tokens(conversation), manager.max_tokens)
        self.refresh_session_status()

    def refresh_session_status(self) -> None:
        """The status lines that need no token count: plan, usage, mode, session."""
        conversation = self.runtime.agent.conversation
        self.status.plan.show_messages(conversation.messages)
        agent = self.runtime.agent  # a resumed session's totals, not only this run's
        self.status.show_usage(agent.session_prompt_tokens, agent.session_completion_tokens)
        self.status.refresh_session_lines()

    def _show_activity(self, working: str = "working…") -> None:
        parts = [working] if self.busy else []
        if self.queued:
            parts.append(f"{len(self.queued)} queued")
        self.status.show_activity(" · ".join(parts))

    def on_key(self, event: events.Key) -> None:
        """A printable key typed while a chat block (a tool row, a summary) has focus belongs
        to the prompt: focus it and type the character there, so nothing typed is lost."""
        if not event.is_printable or event.character is None:
            return
        if self.screen is not self.screen_stack[0]:
            return  # a dialog or overlay has its own keys (y/a/n, q…)
        if isinstance(self.focused, TextArea | Input):
            return
        event.stop()
        self.prompt.focus()
        self.prompt.insert(event.character)

    # --- actions -------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Esc means "interrupt" only while something runs; hide it from the footer otherwise.
        if action == "interrupt":
            return self.busy
        return True

    def watch_busy(self) -> None:
        self.refresh_bindings()

    def action_interrupt(self) -> None:
        """Stop the running turn; queued messages go back into the prompt, not lost."""
        if not self.busy:
            return
        self.workers.cancel_group(self, "agent-turn")
        if self.queued:
            self._queued_returned_to_prompt = True
            texts = [text for text, _ in self.queued]
            for _, block in self.queued:
                block.remove()
            self.queued.clear()
            self.prompt.load_text("\n\n".join(texts))
            self.prompt.move_cursor(self.prompt.document.end)

    def action_interrupt_or_quit(self) -> None:
        """Ctrl+C: clear a draft in the prompt first; else interrupt a running turn; a second
        press in quick succession quits."""
        if self.prompt.text.strip() and self.screen is self.screen_stack[0]:
            # Like a shell: Ctrl+C drops the line being typed (Up does not bring it back).
            self.prompt.clear()
            self._last_interrupt_key = -QUIT_CONFIRM_SECONDS
            return
        now = time.monotonic()
        if now - self._last_interrupt_key < QUIT_CONFIRM_SECONDS:
            self.exit(0)
            return
        self._last_interrupt_key = now
        if self.busy:
            self.action_interrupt()
        self.notify("Press Ctrl+C again to quit", timeout=QUIT_CONFIRM_SECONDS)

    def action_open_settings(self) -> None:
        """Open the /settings overlay."""
        parsed = ParsedCommand("settings", "", None)
        self.when_runtime_ready(lambda: self.commands_runner.run(parsed))

    def action_cycle_mode(self) -> None:
        """Switch to the next permission mode (docs/adr/0029)."""
        self.when_runtime_ready(lambda: cycle_mode(self))

    def action_help(self) -> None:
        """Show help."""
        self.call_later(self.commands_runner.run, ParsedCommand("help", "", None))

    # --- configuration -------------------------------------------------------------------------
    async def show_settings(self, settings: Settings) -> None:
        """Reflect settings now in use: header, status pane, reasoning display; says so in
        the chat when an API key has just made Forge usable."""
        key_added = needs_api_key(self.settings) and not needs_api_key(settings)
        self.settings = settings
        llm = settings.llm
        self.header.show_models(llm.model, llm.summarization_model)
        self.status.summarization.set_model(llm.effective_summarization_model)
        if not self._summaries_turned_off():
            self.status.summarization.summaries_back_on()
        context = settings.context
        self.status.gauge.set_thresholds(context.warning_threshold, context.auto_summary_threshold)
        self.chat.show_reasoning = settings.ui.show_reasoning
        self.apply_theme(settings.ui.theme)
        self.refresh_context_gauge()
        if key_added:
            # The "no API key" welcome is no longer true.
            for notice in list(self.chat.query(NoticeBlock)):
                if notice.kind == "welcome":
                    await notice.remove()
            await self.chat.add_notice(KEY_ADDED)

    def apply_theme(self, name: str) -> None:
        """Use the Textual theme `name`; an unknown name keeps the current theme."""
        if name in self.available_themes:
            self.theme = name

    async def on_config_reload_controller_applied(
        self, message: ConfigReloadController.Applied
    ) -> None:
        config_reloaded(self)
        await self.show_settings(message.settings)

    async def on_config_reload_controller_rejected(
        self, message: ConfigReloadController.Rejected
    ) -> None:
        config_still_unreadable(self, message.error)
        # The toast is short-lived and may cut a long YAML error off: the chat keeps it whole.
        await self.chat.add_notice(
            f"**Config change not applied**: `{message.error}`. The running settings are "
            "unchanged; fix the file and it is reloaded.",
            kind="error",
        )


QUIET_STRATEGIES = frozenset({"masking", "ingest_cap"})
"""Deterministic tiers the chat does not show as summary blocks (ADR 0023)."""


def run_tui(args: argparse.Namespace) -> int:
    """`forge`: open the TUI on `args.workspace`, optionally resuming a session.

    Only the workspace is checked here; the config, the provider and the tokenizer load in
    the app after its first frame. An unknown `--resume` id ends the app with exit code 2.
    """
    import sys

    workspace = Path(args.workspace).expanduser().resolve()
    if not workspace.is_dir():
        print(f"forge: workspace {workspace} is not a directory", file=sys.stderr)
        return 2
    from forge.agent.exit_signals import exit_after_grace, exit_code_for, exit_on_signals

    app = ForgeApp(
        workspace=workspace,
        session_id=getattr(args, "resume", None),
        resume_latest=bool(getattr(args, "continue_session", False)),
    )

    # SIGTERM/SIGHUP/SIGINT: kill running commands, end the turn, exit 128+N (ADR 0021); if
    # that hangs (a closed terminal can wedge Textual's output), end the process anyway (15 s).
    def exit_app(number: int) -> None:
        app.exit(return_code=exit_code_for(number))
        exit_after_grace(exit_code_for(number))

    # The Runner's close() settles the turn worker (cancels and awaits it), as asyncio.run does.
    with asyncio.Runner() as runner, exit_on_signals(runner.get_loop(), exit_app):
        result = app.run(loop=runner.get_loop())
    return result if isinstance(result, int) else app.return_code or 0
