"""The one-line header at 80 columns: the models stay whole, the workspace's path gives way."""

from __future__ import annotations

from textual.app import App, ComposeResult

from forge.tui.widgets.header import ForgeHeader

LONG_WORKSPACE = "/home/someone/code/a-rather-long-project-name"


class HeaderHost(App[None]):
    def __init__(self, header: ForgeHeader) -> None:
        super().__init__()
        self.header = header

    def compose(self) -> ComposeResult:
        yield self.header


async def shown(header: ForgeHeader, width: int = 80) -> str:
    """The header's line as the screen draws it."""
    app = HeaderHost(header)
    async with app.run_test(size=(width, 5)) as pilot:
        await pilot.pause()
        strips = app.screen._compositor.render_strips()
        return "".join(segment.text for segment in strips[0]).rstrip()


async def test_a_header_that_fits_is_shown_whole() -> None:
    line = await shown(ForgeHeader("~/projects/dates", "gpt-4.1", "gpt-4.1-mini"))
    assert line == " forge  ~/projects/dates  │  model gpt-4.1  │  summaries gpt-4.1-mini"


async def test_at_80_columns_the_default_summaries_label_goes_before_the_model_is_cut() -> None:
    line = await shown(ForgeHeader("/tmp/tryout/proj2", "claude-sonnet-4-5", ""))
    assert line == " forge  /tmp/tryout/proj2  │  model claude-sonnet-4-5"


async def test_at_80_columns_a_long_path_is_shortened_from_its_start_and_both_models_stay() -> None:
    line = await shown(ForgeHeader(LONG_WORKSPACE, "claude-sonnet-4-5", "claude-haiku-4-5"))
    assert line.endswith("│  model claude-sonnet-4-5  │  summaries claude-haiku-4-5")
    assert "  …" in line and "-name  │" in line
    assert len(line) <= 80
