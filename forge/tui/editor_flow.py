"""Editing the prompt in the user's editor (Ctrl+G), and hiding the status pane (F3).

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
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App, SuspendNotSupported

if TYPE_CHECKING:
    from forge.tui.widgets.prompt_input import PromptInput
    from forge.tui.widgets.status import StatusPane

EDITOR_KEY = "ctrl+g"
STATUS_KEY = "f3"


def editor_command() -> list[str]:
    """`$VISUAL`, else `$EDITOR`, split as a shell would ("code --wait"); empty when unset."""
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            return shlex.split(value)
    return []


class EditorFlow(App[int]):
    """Mixed into `ForgeApp`: the external editor and the status pane's toggle."""

    status: StatusPane

    if TYPE_CHECKING:

        @property
        def prompt(self) -> PromptInput: ...  # ForgeApp's

    def action_edit_prompt(self) -> None:
        """Open the prompt's text in `$VISUAL`/`$EDITOR`; take back what was saved."""
        command = editor_command()
        if not command:
            self.notify("Set $VISUAL or $EDITOR to edit the prompt in your editor.", timeout=5)
            return
        handle, name = tempfile.mkstemp(prefix="forge-prompt-", suffix=".md")
        path = Path(name)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(self.prompt.text)
            try:
                with self.suspend():
                    completed = subprocess.run([*command, str(path)], check=False)
            except (OSError, SuspendNotSupported) as error:
                self.notify(f"Could not run the editor: {error}", severity="error", markup=False)
                return
            if completed.returncode != 0:
                self.notify(
                    f"The editor exited with status {completed.returncode}; the prompt is kept.",
                    severity="warning",
                )
                return
            text = path.read_text(encoding="utf-8", errors="replace")
        finally:
            path.unlink(missing_ok=True)
        self.prompt.load_text(text.rstrip("\n"))
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()

    def action_toggle_status(self) -> None:
        """Hide the status pane (more room for the chat on a narrow terminal), or show it."""
        self.status.display = not self.status.display
