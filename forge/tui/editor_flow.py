"""Editing the prompt in the user's editor (Ctrl+G); F3 (hiding the status pane) is the
app's one line.

Ctrl+G writes the prompt's text to a private temporary file, suspends the app (the terminal
is the editor's), runs `$VISUAL` or else `$EDITOR` on it, and loads back what was saved. The
editor runs in the foreground as Textual documents it: while it is open the app is suspended,
and a running turn's updates wait until it closes (docs/adr/0049).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App, SuspendNotSupported

if TYPE_CHECKING:
    from forge.tui.widgets.prompt_input import PromptInput

EDITOR_KEY = "ctrl+g"
STATUS_KEY = "f3"


def editor_command() -> list[str]:
    """`$VISUAL`, else `$EDITOR`, split as a shell would ("code --wait"); empty when unset."""
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            return shlex.split(value)
    return []


class PromptEditor:
    """Ctrl+G: the prompt's text in the user's editor, taken back when saved."""

    def __init__(self, app: App[Any], prompt: Callable[[], PromptInput]) -> None:
        self._app = app
        self._prompt = prompt

    def edit(self) -> None:
        """Open the prompt's text in `$VISUAL`/`$EDITOR`; take back what was saved."""
        app, prompt = self._app, self._prompt()
        command = editor_command()
        if not command:
            app.notify("Set $VISUAL or $EDITOR to edit the prompt in your editor.", timeout=5)
            return
        handle, name = tempfile.mkstemp(prefix="forge-prompt-", suffix=".md")
        path = Path(name)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(prompt.text)
            try:
                with app.suspend():
                    completed = subprocess.run([*command, str(path)], check=False)
            except (OSError, SuspendNotSupported) as error:
                app.notify(f"Could not run the editor: {error}", severity="error", markup=False)
                return
            if completed.returncode != 0:
                app.notify(
                    f"The editor exited with status {completed.returncode}; the prompt is kept.",
                    severity="warning",
                )
                return
            text = path.read_text(encoding="utf-8", errors="replace")
        finally:
            path.unlink(missing_ok=True)
        prompt.load_text(text.rstrip("\n"))
        prompt.move_cursor(prompt.document.end)
        prompt.focus()
