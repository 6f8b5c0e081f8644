"""The settings in use, shown where they show (header, status pane, chat, theme), and their
changes: the overlay, `/model`, a skill switched off, a theme picked, and the config file's
reloads applied or refused (docs/adr/0031).

`push` is the one place the settings reach the widgets that show them: at start, on a
session given to the app, and after every change (before this, two copies of it lived in
the app and here)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import App

from forge.config.errors import ConfigSaveError
from forge.text_safety import terminal_safe
from forge.tui.config_problem import config_still_unreadable
from forge.tui.messages import ModelSwitchRequested, SkillsDisabledSaveRequested
from forge.tui.session_flows import SessionLifecycle
from forge.tui.widgets.chat import ChatView
from forge.tui.widgets.chat_blocks import NoticeBlock
from forge.tui.widgets.config_banner import ConfigProblemBanner
from forge.tui.widgets.header import ForgeHeader
from forge.tui.widgets.status import StatusPane
from forge.tui.widgets.welcome import KEY_ADDED, needs_api_key

if TYPE_CHECKING:
    from forge.config.settings import Settings
    from forge.tui.commands import SlashCommandRunner
    from forge.tui.reload import ConfigReloadController


class Configuration:
    """Shows the settings in use and applies their changes through the session's reload
    controller (the one path to the session; forge.tui.reload)."""

    def __init__(
        self,
        app: App[Any],
        *,
        chat: ChatView,
        header: ForgeHeader,
        status: StatusPane,
        commands: SlashCommandRunner,
        sessions: SessionLifecycle,
    ) -> None:
        self._app = app
        self._chat = chat
        self._header = header
        self._status = status
        self._commands = commands
        self._sessions = sessions

    def push(self, settings: Settings) -> None:
        """Give `settings` to every widget that shows one of them: the models (header,
        summarization panel), the gauge's thresholds, the reasoning display, the theme."""
        llm = settings.llm
        self._header.show_models(llm.model, llm.summarization_model)
        self._status.summarization.set_model(llm.effective_summarization_model)
        context = settings.context
        self._status.gauge.set_thresholds(context.warning_threshold, context.auto_summary_threshold)
        self._chat.show_reasoning = settings.ui.show_reasoning
        self.apply_theme(settings.ui.theme)

    async def show(self, settings: Settings) -> None:
        """Reflect settings now in use (`push`, the gauge, summaries back on); says so in
        the chat when an API key has just made Forge usable."""
        sessions = self._sessions
        key_added = needs_api_key(sessions.settings) and not needs_api_key(settings)
        sessions.settings = settings
        self.push(settings)
        if not sessions.session.reports.summaries_disabled:
            self._status.summarization.summaries_back_on()
        sessions.refresh_gauge()
        if key_added:
            # The "no API key" welcome is no longer true.
            for notice in list(self._chat.query(NoticeBlock)):
                if notice.kind == "welcome":
                    await notice.remove()
            await self._chat.add_notice(KEY_ADDED)

    @property
    def _reload(self) -> ConfigReloadController:
        return self._sessions.reload_controller

    def open_overlay(self) -> None:
        """Open the settings overlay; saving hot-reloads through the reload controller."""
        from forge.tui.settings.screen import SettingsScreen

        screen = SettingsScreen(self._sessions.config_store, running=self._sessions.settings)
        self._app.push_screen(screen, callback=self._reload.apply_saved)

    async def switch_model(self, message: ModelSwitchRequested) -> None:
        """/model NAME: a session-only copy of the settings, through the reload controller's
        one path (docs/adr/0041); the chat says what changed."""
        running = self._sessions.settings
        current, model = running.llm.model, message.model
        llm = running.llm.model_copy(update={"model": model})
        settings = running.model_copy(update={"llm": llm})
        try:
            await self._reload.apply_override(settings)
        except Exception as error:  # e.g. a provider that cannot be built
            await self._chat.add_notice(f"Could not switch the model: {error}", kind="error")
            return
        await self.show(settings)
        await self._chat.add_notice(f"Model for this session: `{model}` (was `{current}`).")

    async def save_skills_disabled(self, message: SkillsDisabledSaveRequested) -> None:
        """Save `skills.disabled` to the user config and apply it through the reload
        controller; the skills' commands follow (docs/adr/0046)."""
        running = self._sessions.settings
        skills = running.skills.model_copy(update={"disabled": message.disabled})
        new = running.model_copy(update={"skills": skills})
        try:
            result = self._sessions.config_store.save(new, {"skills.disabled"})
        except (ConfigSaveError, OSError) as error:  # the file is left as it was
            await self._chat.add_notice(f"Could not save the config: {error}", kind="error")
            return
        await self._reload.apply(result, source="settings")
        await self._commands.load_skill_commands()
        patterns = ", ".join(f"`{terminal_safe(p)}`" for p in result.settings.skills.disabled)
        await self._chat.add_notice(
            f"{message.said}; `skills.disabled` in the user config is now [{patterns}]. The "
            "model's listing follows in the next session."
        )

    def theme_changed(self, theme: str) -> None:
        """A theme chosen in the command palette is saved as `ui.theme` (issue 35)."""
        sessions = self._sessions
        if sessions.loaded and theme != sessions.settings.ui.theme:
            self._app.call_later(self._save_theme, theme)

    async def _save_theme(self, theme: str) -> None:
        running = self._sessions.settings
        if theme != self._app.theme or theme == running.ui.theme:
            return  # another theme was chosen since, or this one is saved already
        ui = running.ui.model_copy(update={"theme": theme})
        try:
            result = self._sessions.config_store.save(
                running.model_copy(update={"ui": ui}), {"ui.theme"}
            )
        except (ConfigSaveError, OSError) as error:  # the file is left as it was
            await self._chat.add_notice(f"Could not save the theme: {error}", kind="error")
            return
        await self._reload.apply(result, source="settings")

    def apply_theme(self, name: str) -> None:
        """Use the Textual theme `name`; an unknown name keeps the current theme."""
        if name in self._app.available_themes:
            self._app.theme = name

    async def reload_applied(self, settings: Settings) -> None:
        """The file can be read again: the banner goes, the settings show."""
        self._app.query_one(ConfigProblemBanner).clear_problem()
        await self.show(settings)

    async def reload_rejected(self, error: Exception) -> None:
        """The file cannot be used: the banner says why, and so does the chat (the toast is
        short-lived and may cut a long YAML error off)."""
        config_still_unreadable(self._app.query_one(ConfigProblemBanner), error)
        await self._chat.add_notice(
            f"**Config change not applied**: `{error}`. The running settings are "
            "unchanged; fix the file and it is reloaded.",
            kind="error",
        )
