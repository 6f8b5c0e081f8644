"""The `/settings` overlay: edit the config, check it as you type, Ctrl+S to save.

The screen edits a `SettingsDraft` over the store's current load. Saving goes through the
store (atomic, mode 0600, environment values left out unless edited) and dismisses with the new
`LoadResult`; applying it to the running agent is the caller's job (see
`forge.tui.reload.ConfigReloadController.apply_saved`). A value the file holds but that is
invalid is shown as the value in use (its default) and written by the next save, even when
nothing was edited: the save repairs the file.

Opening is fast: the first section is composed with the screen, the others are mounted just
after the first frame. Keys typed before the overlay was on screen (while it was being built)
are dropped rather than typed into a field, and focusing a field never selects its text.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Protocol

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Label, Static

from forge.config.errors import ConfigSaveError
from forge.config.keys import leaf_values
from forge.config.settings import Settings
from forge.config.store import LoadResult
from forge.text_safety import terminal_safe
from forge.tui.settings.confirm import DiscardChangesScreen
from forge.tui.settings.fields import (
    SECTIONS,
    FieldKind,
    FieldSection,
    SettingField,
    all_fields,
)
from forge.tui.settings.mcp_section import MCP_KEY, McpToggles, on_off
from forge.tui.settings.validation import DraftInvalidError, SettingsDraft, SettingValidator

FROM_ENVIRONMENT = "from environment"
FROM_ENVIRONMENT_EDITED = "from environment · edited, will be saved"
SECRET_FIELDS = tuple(field for field in all_fields() if field.kind is FieldKind.SECRET)


class SettingsStore(Protocol):
    """What the overlay needs from `forge.config.ConfigStore`."""

    @property
    def current(self) -> LoadResult:
        """The latest load of the config file."""
        ...

    def save(self, settings: Settings, changed_keys: set[str] | None = None) -> LoadResult:
        """Write `settings`, then reload; raises ConfigSaveError leaving the file unchanged."""
        ...


class SettingInput(Input):
    """A field's input: never selects its text on focus, and ignores keys typed before the
    overlay was first on screen (they were meant for wherever the person was typing)."""

    async def _on_key(self, event: events.Key) -> None:
        shown_at = getattr(self.screen, "shown_at", None)
        # Key events carry the (monotonic) time they were read; see textual.message.Message.
        if shown_at is None or event.time < shown_at:
            event.prevent_default()  # not inserted, and no binding of the Input runs
            event.stop()


class SettingsScreen(ModalScreen[LoadResult | None]):
    """The settings overlay. Dismisses with the new `LoadResult` after a save, else None."""

    CSS_PATH = "settings.tcss"
    AUTO_FOCUS = f"#{all_fields()[0].widget_id}"

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "close", "Close"),
        Binding("ctrl+r", "toggle_reveal", "Reveal key"),
    ]

    def __init__(self, store: SettingsStore, running: Settings | None = None) -> None:
        """`running`: the settings Forge runs with; shown instead of the load's when the file
        could not be applied (the load then holds defaults, not what is in use)."""
        super().__init__()
        self.store = store
        self.loaded = store.current
        self.saving_disabled = self.loaded.save_blocked is not None
        shown = running if running is not None and self.saving_disabled else self.loaded.settings
        self.draft = SettingsDraft(shown, all_fields())
        self.fields_by_input_id = {field.widget_id: field for field in all_fields()}
        self.mcp = McpToggles(shown.mcp_servers)
        self.shown_at: float | None = None
        """When the overlay was first on screen (keys read before then are dropped)."""
        self.built = False
        """Every section is mounted (the later ones are mounted after the first frame)."""

    # --- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        """A titled dialog: one block per section, a help line and the keys."""
        with Vertical(id="settings-dialog") as dialog:
            dialog.border_title = "Settings"
            # A border title is markup; a path may hold "[".
            dialog.border_subtitle = escape(terminal_safe(_display_path(self.loaded.path)))
            yield Static(
                terminal_safe(self._file_error_text()), id="settings-file-error", markup=False
            )
            with VerticalScroll(id="settings-body"):
                # The other sections are mounted after the first frame (`_build_rest`).
                yield from self._section_widgets(SECTIONS[0])
            # Docked at the bottom of the dialog: on a short terminal the fields scroll and
            # the keys stay in view.
            with Vertical(id="settings-footer"):
                yield Static("", id="settings-help", markup=False)
                yield Static(
                    "[b]Ctrl+S[/] save   [b]Esc[/] close   [b]Ctrl+R[/] reveal API key   "
                    "[b]Tab[/] next field",
                    id="settings-keys",
                )

    def _section_widgets(self, section: FieldSection) -> list[Widget]:
        widgets: list[Widget] = [Static(section.title, classes="section-title")]
        for field in section.fields:
            widgets.extend(self._field_widgets(field))
        return widgets

    def _field_widgets(self, field: SettingField) -> list[Widget]:
        row: list[Widget] = [
            Label(field.label, classes="field-label"),
            SettingInput(
                value=self.draft.texts[field.key],
                placeholder=field.placeholder,
                password=field.kind is FieldKind.SECRET,
                validators=[SettingValidator(self.draft, field)],
                id=field.widget_id,
                compact=True,
                select_on_focus=False,
            ),
        ]
        if field.key in self.loaded.env_keys:
            row.append(
                Static(
                    FROM_ENVIRONMENT,
                    classes="field-source",
                    id=f"source-{field.slug}",
                )
            )
        if field.kind is FieldKind.SECRET:
            row.append(Button("Show", id="reveal-api-key", compact=True))
        return [
            Horizontal(*row, classes="field-row", id=f"row-{field.slug}"),
            Static("", classes="field-reason", id=f"reason-{field.slug}", markup=False),
        ]

    def _file_error_text(self) -> str:
        error = self.loaded.error
        if error is None:
            return ""
        if self.loaded.save_blocked is not None:
            return (
                f"{error}\nShown: the settings Forge is running with. Saving is off until the "
                "file is fixed by hand (it is reloaded as soon as it is)."
            )
        if error.source == "file" and (error.key or "").startswith(f"{MCP_KEY}."):
            return (
                f"{error} — this server is left out; fix its entry in the file (a save keeps "
                "it as written)."
            )
        if error.source == "file":
            return f"{error} — its default runs instead; saving writes the values shown."
        return f"{error} — the environment value is ignored."

    def on_mount(self) -> None:
        """Show the file error, if there is one; build the rest once the first frame is up."""
        self.query_one("#settings-file-error").display = self.loaded.error is not None
        self.call_after_refresh(self._build_rest)

    async def _build_rest(self) -> None:
        self.shown_at = time.monotonic()
        body = self.query_one("#settings-body", VerticalScroll)
        # One section at a time: keys and repaints are handled in between.
        for section in SECTIONS[1:]:
            await body.mount_all(self._section_widgets(section))
        await body.mount_all(self.mcp.widgets())
        self.built = True
        if self.draft.errors():
            self._refresh_validity()

    def _inputs(self) -> list[tuple[SettingField, Input]]:
        """The fields mounted so far, with their inputs."""
        return [
            (self.fields_by_input_id[field_input.id or ""], field_input)
            for field_input in self.query(SettingInput)
        ]

    # --- as you type -------------------------------------------------------------------------
    def on_input_changed(self, event: Input.Changed) -> None:
        """Record the text and re-check every field (rules can span fields)."""
        field = self.fields_by_input_id.get(event.input.id or "")
        if field is None or event.value == self.draft.texts[field.key]:
            return  # an input reporting its first value while mounting: nothing to re-check
        self.draft.set_text(field.key, event.value)
        self._refresh_validity()
        if field.key in self.loaded.env_keys:
            edited = field.key in self.draft.changed_keys()
            source = self.query_one(f"#source-{field.slug}", Static)
            source.update(FROM_ENVIRONMENT_EDITED if edited else FROM_ENVIRONMENT)
            source.set_class(edited, "-edited")

    def _refresh_validity(self) -> dict[str, str]:
        """Mark every field valid or invalid and show its reason; returns the reasons."""
        reasons = self.draft.errors()
        for field, field_input in self._inputs():
            field_input.validate(field_input.value)
            reason_line = self.query_one(f"#reason-{field.slug}", Static)
            reason = reasons.get(field.key)
            reason_line.update(f"↳ {reason}" if reason else "")
            reason_line.set_class(reason is not None, "-shown")
        return reasons

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Show the focused field's description in the help line."""
        field = self.fields_by_input_id.get(event.widget.id or "")
        server = self.mcp.name_of(event.widget.id or "")
        if field is not None:
            help_text = f"{field.key} — {field.description}"
            self.query_one("#settings-help", Static).update(help_text)
        elif server is not None:
            help_text = (
                f"{MCP_KEY}.{server}.enabled — connect to this server; Space switches it (off "
                "keeps the entry but stops the server, when saved)"
            )
            self.query_one("#settings-help", Static).update(help_text)

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        """Record an MCP server switched on or off."""
        server = self.mcp.name_of(event.checkbox.id or "")
        if server is not None:
            self.mcp.current[server] = event.value
            event.checkbox.label = on_off(event.value)

    def _repairs(self) -> set[str]:
        """Keys whose invalid value in the file is shown as its default: saved even when not
        edited, so that a save repairs the file (`mcp_servers` entries are left to the
        person: dropping one would lose what they wrote)."""
        keys = set(leaf_values(self.draft.base))
        repairs: set[str] = set()
        for problem in self.loaded.file_problems:
            key = problem.key or ""
            found = [k for k in keys if key == k or key.startswith(f"{k}.")]
            repairs.update(k for k in found if not k.startswith(MCP_KEY))
        return repairs

    # --- actions -----------------------------------------------------------------------------
    def action_save(self) -> None:
        """Save through the store and dismiss with the new load, or say why not."""
        if self.saving_disabled:
            self.notify(
                "The config file has an error (shown at the top). Fix the file by hand; it is "
                "reloaded as soon as it is valid.",
                title="Saving is off",
                severity="error",
                timeout=10,
            )
            return
        reasons = self._refresh_validity()
        try:
            settings = self.draft.build()
        except DraftInvalidError as error:
            self._report_invalid(error.reasons or reasons)
            return
        if self.store.current is not self.loaded:
            # The file was reloaded while the overlay was open; saving this draft over it
            # would silently undo that edit.
            self.notify(
                "The config file changed while the settings were open. "
                "Close (Esc) and reopen /settings to edit the new values.",
                title="Settings not saved",
                severity="error",
                timeout=10,
            )
            return
        changed_keys = self.draft.changed_keys() | self.mcp.changed_keys() | self._repairs()
        if not changed_keys:
            self.notify("Nothing changed, nothing to save.", title="Settings")
            return
        if self.mcp.changed_keys():
            settings = settings.model_copy(update={"mcp_servers": self.mcp.applied()})
        try:
            result = self.store.save(settings, changed_keys)
        except ConfigSaveError as error:
            self.notify(
                str(error), title="Settings not saved", severity="error", timeout=10, markup=False
            )
            return
        self.notify(f"Saved to {_display_path(result.path)}", title="Settings saved", markup=False)
        self.dismiss(result)

    def _report_invalid(self, reasons: dict[str, str]) -> None:
        fields = {field.key: field for field in all_fields()}
        lines = []
        for key, reason in reasons.items():
            label = fields[key].label if key in fields else key
            lines.append(f"{label}: {reason}")
        self.notify(
            "\n".join(lines), title="Settings not saved", severity="error", timeout=10, markup=False
        )
        first_invalid = next((fields[key] for key in reasons if key in fields), None)
        if first_invalid is not None:
            for field_input in self.query(f"#{first_invalid.widget_id}"):
                field_input.focus()

    def action_close(self) -> None:
        """Close; ask first when there are unsaved edits."""
        changed = self.draft.changed_keys()
        if not changed and not self.mcp.changed_keys():
            self.dismiss(None)
            return
        labels = [field.label for field in all_fields() if field.key in changed]
        labels += [f"MCP server {name}" for name in self.mcp.changed_names()]

        def discard_if_confirmed(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        self.app.push_screen(DiscardChangesScreen(labels), discard_if_confirmed)

    def action_toggle_reveal(self) -> None:
        """Show or hide the API key's characters."""
        for field in SECRET_FIELDS:
            secret_input = self.query_one(f"#{field.widget_id}", Input)
            secret_input.password = not secret_input.password
            revealed = not secret_input.password
            self.query_one("#reveal-api-key", Button).label = "Hide" if revealed else "Show"

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """The reveal button toggles the key's visibility."""
        if event.button.id == "reveal-api-key":
            event.stop()
            self.action_toggle_reveal()


def _display_path(path: Path) -> str:
    """`path` with the home directory shown as `~`."""
    try:
        return f"~/{path.relative_to(Path.home())}"
    except ValueError:
        return str(path)
