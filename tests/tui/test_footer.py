"""The footer rebuilds its keys only when the bindings it shows change (docs/adr/0042)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from forge.tui.widgets.footer import ForgeFooter


class FooterApp(App[None]):
    BINDINGS = [Binding("f1", "help", "Help"), Binding("escape", "interrupt", "Interrupt")]

    def __init__(self) -> None:
        super().__init__()
        self.busy = False

    def compose(self) -> ComposeResult:
        yield Input(id="first")
        yield Input(id="second")
        yield ForgeFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.busy if action == "interrupt" else True

    def action_help(self) -> None: ...

    def action_interrupt(self) -> None: ...


def keys(app: App[None]) -> list[FooterKey]:
    return list(app.query(FooterKey))


def actions(app: App[None]) -> list[str]:
    return [key.action for key in keys(app) if key.action != "command_palette"]


async def test_the_same_bindings_again_keep_the_keys_shown() -> None:
    app = FooterApp()
    async with app.run_test() as pilot:
        await pilot.pause()
        shown = keys(app)
        assert actions(app) == ["help"]
        # Focus moves and the screen says its bindings may have changed; they did not.
        await pilot.press("tab")
        app.screen.bindings_updated_signal.publish(app.screen)
        await pilot.pause()
        assert keys(app) == shown, "the footer was rebuilt for unchanged bindings"


async def test_a_binding_that_changes_is_shown() -> None:
    app = FooterApp()
    async with app.run_test() as pilot:
        await pilot.pause()
        app.busy = True
        app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert actions(app) == ["help", "interrupt"]
        app.busy = False
        app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert actions(app) == ["help"]
