"""The app's configuration handlers: settings now in use shown everywhere (header, status pane,
chat, theme), and the config file's reloads applied or refused (docs/adr/0031)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.app import App

from forge.config.errors import ConfigSaveError
from forge.text_safety import terminal_safe
from forge.tui.config_problem import config_still_unreadable
from forge.tui.messages import (
    ModelSwitchRequested,
    SettingsRequested,
    SkillsDisabledSaveRequested,
)
from forge.tui.widgets.chat_blocks import NoticeBlock
from forge.tui.widgets.config_banner import ConfigProblemBanner
from forge.tui.widgets.welcome import KEY_ADDED, needs_api_key

if TYPE_CHECKING:
    from forge.config.settings import Settings
    from forge.config.store import ConfigStore
    from forge.session.core import Session
    from forge.tui.commands import SlashCommandRunner
    from forge.tui.reload import ConfigReloadController
    from forge.tui.widgets.chat import ChatView
    from forge.tui.widgets.header import ForgeHeader
    from forge.tui.widgets.status import StatusPane


class ConfigFlows(App[int]):
    """Mixed into `ForgeApp`: showing settings, and the reload controller's outcomes."""

    settings: Settings
    session: Session
    config_store: ConfigStore
    reload_controller: ConfigReloadController
    header: ForgeHeader
    chat: ChatView
    status: StatusPane
    commands_runner: SlashCommandRunner

    if TYPE_CHECKING:

        def refresh_context_gauge(self) -> None: ...  # ForgeApp's

    async def show_settings(self, settings: Settings) -> None:
        """Reflect settings now in use: header, status pane, reasoning display; says so in
        the chat when an API key has just made Forge usable."""
        key_added = needs_api_key(self.settings) and not needs_api_key(settings)
        self.settings = settings
        llm = settings.llm
        self.header.show_models(llm.model, llm.summarization_model)
        self.status.summarization.set_model(llm.effective_summarization_model)
        if not self.session.reports.summaries_disabled:
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

    @on(SettingsRequested)
    def _settings_requested(self) -> None:
        """Open the settings overlay; saving hot-reloads through the reload controller."""
        from forge.tui.settings.screen import SettingsScreen

        screen = SettingsScreen(self.config_store, running=self.settings)
        self.push_screen(screen, callback=self.reload_controller.apply_saved)

    @on(ModelSwitchRequested)
    async def _model_switch_requested(self, message: ModelSwitchRequested) -> None:
        """/model NAME: a session-only copy of the settings, through the reload controller's
        one path (docs/adr/0041); the chat says what changed."""
        current, model = self.settings.llm.model, message.model
        llm = self.settings.llm.model_copy(update={"model": model})
        settings = self.settings.model_copy(update={"llm": llm})
        try:
            await self.reload_controller.apply_override(settings)
        except Exception as error:  # e.g. a provider that cannot be built
            await self.chat.add_notice(f"Could not switch the model: {error}", kind="error")
            return
        await self.show_settings(settings)
        await self.chat.add_notice(f"Model for this session: `{model}` (was `{current}`).")

    @on(SkillsDisabledSaveRequested)
    async def _skills_disabled_save_requested(self, message: SkillsDisabledSaveRequested) -> None:
        """Save `skills.disabled` to the user config and apply it through the reload
        controller; the skills' commands follow (docs/adr/0046)."""
        skills = self.settings.skills.model_copy(update={"disabled": message.disabled})
        new = self.settings.model_copy(update={"skills": skills})
        try:
            result = self.config_store.save(new, {"skills.disabled"})
        except (ConfigSaveError, OSError) as error:  # the file is left as it was
            await self.chat.add_notice(f"Could not save the config: {error}", kind="error")
            return
        await self.reload_controller.apply(result, source="settings")
        await self.commands_runner.load_skill_commands()
        patterns = ", ".join(f"`{terminal_safe(p)}`" for p in result.settings.skills.disabled)
        await self.chat.add_notice(
            f"{message.said}; `skills.disabled` in the user config is now [{patterns}]. The "
            "model's listing follows in the next session."
        )

    def watch_theme(self, theme: str) -> None:
        """A theme chosen in the command palette is saved as `ui.theme` (issue 35)."""
        settings = getattr(self, "settings", None)
        if settings is not None and theme != settings.ui.theme:
            self.call_later(self._save_theme, theme)

    async def _save_theme(self, theme: str) -> None:
        if theme != self.theme or theme == self.settings.ui.theme:
            return  # another theme was chosen since, or this one is saved already
        ui = self.settings.ui.model_copy(update={"theme": theme})
        try:
            result = self.config_store.save(
                self.settings.model_copy(update={"ui": ui}), {"ui.theme"}
            )
        except (ConfigSaveError, OSError) as error:  # the file is left as it was
            await self.chat.add_notice(f"Could not save the theme: {error}", kind="error")
            return
        await self.reload_controller.apply(result, source="settings")

    def apply_theme(self, name: str) -> None:
        """Use the Textual theme `name`; an unknown name keeps the current theme."""
        if name in self.available_themes:
            self.theme = name

    async def on_config_reload_controller_applied(
        self, message: ConfigReloadController.Applied
    ) -> None:
        # The file can be read again: the banner goes.
        self.query_one(ConfigProblemBanner).clear_problem()
        await self.show_settings(message.settings)

    async def on_config_reload_controller_rejected(
        self, message: ConfigReloadController.Rejected
    ) -> None:
        config_still_unreadable(self.query_one(ConfigProblemBanner), message.error)
        # The toast is short-lived and may cut a long YAML error off: the chat keeps it whole.
        await self.chat.add_notice(
            f"**Config change not applied**: `{message.error}`. The running settings are "
            "unchanged; fix the file and it is reloaded.",
            kind="error",
        )
