"""The app's keys: printable keys typed on a chat block go to the prompt, Ctrl+C copies a
selection / clears the draft / interrupts / quits, and the mode key switches the permission
mode. The bindings stay on `ForgeApp`; each action is one line there calling `Keys`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App
from textual.widgets import Input, TextArea

from forge.tui.session_controls import cycle_mode
from forge.tui.turn_flows import Turns
from forge.tui.widgets.prompt_input import PromptInput
from forge.tui.widgets.status import StatusPane

if TYPE_CHECKING:
    from forge.session.core import Session

QUIT_CONFIRM_SECONDS = 2.0
"""A second Ctrl+C within this many seconds quits."""


class Keys:
    """What the keys do; owns when Ctrl+C was last pressed (a second press quits)."""

    def __init__(
        self,
        app: App[Any],
        *,
        prompt: Callable[[], PromptInput],
        status: StatusPane,
        turns: Turns,
        session: Callable[[], Session],
    ) -> None:
        self._app = app
        self._prompt = prompt
        self._status = status
        self._turns = turns
        self._session = session
        self._last_interrupt_key = -QUIT_CONFIRM_SECONDS

    def key(self, event: events.Key) -> None:
        """A printable key typed while a chat block (a tool row, a summary) has focus belongs
        to the prompt: focus it and type the character there, so nothing typed is lost.

        So does a key typed while Forge starts: it can reach the screen before the prompt is
        focused and bubble up to the app once it is (the prompt never saw it); an Enter typed
        then (Ctrl+J: a newline in the terminal's line mode) sends what was typed."""
        app = self._app
        if app.screen is not app.screen_stack[0]:
            return  # a dialog or overlay has its own keys (y/a/n, q…)
        prompt = self._prompt()
        if event.key in ("enter", "ctrl+j") and app.focused is prompt:
            event.stop()
            prompt.submit()
            return
        if not event.is_printable or event.character is None:
            return
        if isinstance(app.focused, TextArea | Input) and app.focused is not prompt:
            return
        event.stop()
        prompt.focus()
        prompt.insert(event.character)

    def interrupt_or_quit(self) -> None:
        """Ctrl+C: copy the selected text, if any (it never counts towards quitting); else
        clear a draft in the prompt; else interrupt a running turn; a second press in quick
        succession quits."""
        app, prompt = self._app, self._prompt()
        if self.copy_selection():
            return
        if prompt.text.strip() and app.screen is app.screen_stack[0]:
            # Like a shell: Ctrl+C drops the line being typed (Up does not bring it back).
            prompt.clear()
            self._last_interrupt_key = -QUIT_CONFIRM_SECONDS
            return
        now = time.monotonic()
        if now - self._last_interrupt_key < QUIT_CONFIRM_SECONDS:
            app.exit(0)
            return
        self._last_interrupt_key = now
        self._turns.interrupt()
        app.notify("Press Ctrl+C again to quit", timeout=QUIT_CONFIRM_SECONDS)

    def copy_selection(self) -> bool:
        """Copy what the mouse selected on the screen, or the focused text area's selection,
        to the clipboard (OSC 52) and say so; False when nothing is selected."""
        from forge.tui.copying import describe_copied

        app = self._app
        focused = app.focused
        text = focused.selected_text if isinstance(focused, TextArea) else ""
        if not text:
            text = app.screen.get_selected_text() or ""
            app.screen.clear_selection()
        if not text:
            return False
        app.copy_to_clipboard(text)
        self._last_interrupt_key = -QUIT_CONFIRM_SECONDS
        app.notify(describe_copied(text, "the selection"), markup=False, timeout=3)
        return True

    def cycle_mode(self) -> None:
        """Switch to the next permission mode (docs/adr/0029) and say so."""
        toast = cycle_mode(self._session())
        self._status.refresh_session_lines()
        self._app.notify(toast, timeout=3)
