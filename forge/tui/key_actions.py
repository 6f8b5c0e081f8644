"""The app's keys: Esc interrupts, Ctrl+C copies a selection / clears the draft / interrupts /
quits, printable
keys typed on a chat block go to the prompt, and the keys that open settings, help and switch
the permission mode."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App
from textual.widgets import Input, TextArea

from forge.tui.background_flows import MOVED_NOTICE
from forge.tui.command_table import ParsedCommand
from forge.tui.session_controls import cycle_mode
from forge.tui.steering import steer_prompt

if TYPE_CHECKING:
    from forge.session.core import Session
    from forge.tui.commands import SlashCommandRunner
    from forge.tui.widgets.chat import ChatView
    from forge.tui.widgets.chat_blocks import UserMessageBlock
    from forge.tui.widgets.prompt_input import PromptInput
    from forge.tui.widgets.status import StatusPane

QUIT_CONFIRM_SECONDS = 2.0
"""A second Ctrl+C within this many seconds quits."""


class KeyActions(App[int]):
    """Mixed into `ForgeApp`: the key bindings' actions."""

    busy: bool
    session: Session
    chat: ChatView
    status: StatusPane
    commands_runner: SlashCommandRunner
    queued: list[tuple[str, UserMessageBlock]]
    _last_interrupt_key: float

    if TYPE_CHECKING:

        @property
        def prompt(self) -> PromptInput: ...  # ForgeApp's

        def when_session_ready(self, callback: Callable[[], Any]) -> None: ...  # StartupFlow's

    def on_key(self, event: events.Key) -> None:
        """A printable key typed while a chat block (a tool row, a summary) has focus belongs
        to the prompt: focus it and type the character there, so nothing typed is lost.

        So does a key typed while Forge starts: it can reach the screen before the prompt is
        focused and bubble up here once it is (the prompt never saw it); an Enter typed then
        (Ctrl+J: a newline in the terminal's line mode) sends what was typed."""
        if self.screen is not self.screen_stack[0]:
            return  # a dialog or overlay has its own keys (y/a/n, q…)
        prompt = self.prompt
        if event.key in ("enter", "ctrl+j") and self.focused is prompt:
            event.stop()
            prompt.submit()
            return
        if not event.is_printable or event.character is None:
            return
        if isinstance(self.focused, TextArea | Input) and self.focused is not prompt:
            return
        event.stop()
        prompt.focus()
        prompt.insert(event.character)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Esc means "interrupt" only while something runs; hide it from the footer otherwise.
        if action in ("interrupt", "steer", "background_command"):
            return self.busy
        if action in ("help", "open_settings"):  # labels hidden during a turn: 80 columns
            return not self.busy  # the keys still work (`…_during_turn`)
        return True

    def action_open_settings_during_turn(self) -> None:
        """F2 while a turn runs: the settings, its footer label making room."""
        self.action_open_settings()

    def action_background_command(self) -> None:
        """Move the model's running command to the background (docs/adr/0057)."""
        why = self.session.move_command_to_background()
        self.notify(f"Cannot move it to the background: {why}" if why else MOVED_NOTICE, timeout=3)

    def action_help_during_turn(self) -> None:
        """F1 while a turn runs: help, its footer label making room for `steer`."""
        self.action_help()

    def action_steer(self) -> None:
        """Send the prompt's text into the running turn now (docs/adr/0057)."""
        steer_prompt(self)

    def watch_busy(self) -> None:
        self.refresh_bindings()

    def action_interrupt(self) -> None:
        """Stop the running turn; queued messages go back into the prompt, not lost."""
        if not self.busy:
            return
        self.workers.cancel_group(self, "agent-turn")
        if self.queued:
            self.chat.queued_returned_to_prompt = True  # the chat's closing note says so
            texts = [block.text for _, block in self.queued]  # as typed (`/greet Alice`)
            for _, block in self.queued:
                block.remove()
                if block.expansion_block is not None:
                    block.expansion_block.remove()
            self.queued.clear()
            self.prompt.load_text("\n\n".join(texts))
            self.prompt.move_cursor(self.prompt.document.end)

    def action_interrupt_or_quit(self) -> None:
        """Ctrl+C: copy the selected text, if any (it never counts towards quitting); else
        clear a draft in the prompt; else interrupt a running turn; a second press in quick
        succession quits."""
        if self.copy_selection():
            return
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

    def copy_selection(self) -> bool:
        """Copy what the mouse selected on the screen, or the focused text area's selection,
        to the clipboard (OSC 52) and say so; False when nothing is selected."""
        from forge.tui.copying import describe_copied

        focused = self.focused
        text = focused.selected_text if isinstance(focused, TextArea) else ""
        if not text:
            text = self.screen.get_selected_text() or ""
            self.screen.clear_selection()
        if not text:
            return False
        self.copy_to_clipboard(text)
        self._last_interrupt_key = -QUIT_CONFIRM_SECONDS
        self.notify(describe_copied(text, "the selection"), markup=False, timeout=3)
        return True

    def action_open_settings(self) -> None:
        """Open the /settings overlay."""
        parsed = ParsedCommand("settings", "", None)
        self.when_session_ready(lambda: self.commands_runner.run(parsed))

    def action_cycle_mode(self) -> None:
        """Switch to the next permission mode (docs/adr/0029)."""
        self.when_session_ready(self._cycle_mode)

    def _cycle_mode(self) -> None:
        toast = cycle_mode(self.session)
        self.status.refresh_session_lines()
        self.notify(toast, timeout=3)

    def action_help(self) -> None:
        """Show help."""
        self.call_later(self.commands_runner.run, ParsedCommand("help", "", None))
