"""What the app says about its config at start-up and on reloads: the load report, the
welcome, and — when the file cannot be read or parsed — the pinned banner naming the file and
line to fix, instead of the "no API key" welcome (the key may well be in that file, and
/settings will not save over it). Issue 18 item 6; docs/adr/0031."""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge.tui.widgets.config_banner import ConfigProblemBanner
from forge.tui.widgets.formatting import display_path
from forge.tui.widgets.welcome import NOT_SENT_NO_KEY, READY_HINT, WELCOME_NO_KEY, needs_api_key

if TYPE_CHECKING:
    from forge.config.errors import ConfigError
    from forge.config.settings import Settings
    from forge.config.store import LoadResult
    from forge.tui.widgets.chat import ChatView

WELCOME_CONFIG_UNREADABLE = """\
## Welcome to Forge

**Your config file cannot be read**: `{where}`: `{message}`

Fix it in an editor: Forge reloads the file as soon as you save it. Until then none of its
values are in use (an API key in it included): Forge runs on the environment's values and the
defaults, and /settings will not save over the file.
"""

NOT_SENT_CONFIG_UNREADABLE = (
    "Not sent: the config file cannot be read, so its API key is not in use. Fix `{where}` "
    "(it reloads when you save it), or set `OPENAI_API_KEY` and restart. Press Up to get your "
    "message back."
)


def _where(error: ConfigError) -> str:
    where = display_path(error.path)
    return f"{where}, line {error.line}" if error.line is not None else where


def _message(error: ConfigError) -> str:
    # The code span holds the path; the parser's message must not close it or add markup.
    return error.message.replace("`", "'")


async def show_start_report(
    chat: ChatView, banner: ConfigProblemBanner, settings: Settings, loaded: LoadResult
) -> None:
    """The chat's first notices: what the load left out, then the welcome (or the ready
    hint); an unreadable file is also pinned in the `banner`."""
    from forge.config.load_report import load_report, unreadable_file

    broken = unreadable_file(loaded)
    report = load_report(loaded)
    if broken is not None:
        banner.show_problem(_where(broken), _message(broken))
        report = report[1:]  # its first line is the file's; the welcome says it in full
    if report:
        # The stderr lines printed before the screen took over are gone; say it here too.
        kind = "error" if loaded.problems else "info"
        await chat.add_notice("\n\n".join(report), kind=kind)
    if broken is not None:
        text = WELCOME_CONFIG_UNREADABLE.format(where=_where(broken), message=_message(broken))
        await chat.add_notice(text, kind="error")
    if not needs_api_key(settings):
        await chat.add_notice(READY_HINT)  # usable all the same (a key in the environment)
    elif broken is None:
        await chat.add_notice(WELCOME_NO_KEY, kind="welcome")


def not_sent_text(loaded: LoadResult, banner: ConfigProblemBanner) -> str:
    """Why a message was not sent without an API key, and what to do."""
    from forge.config.load_report import unreadable_file

    broken = unreadable_file(loaded)
    if broken is not None and banner.problem:
        return NOT_SENT_CONFIG_UNREADABLE.format(where=_where(broken))
    return NOT_SENT_NO_KEY


def config_still_unreadable(banner: ConfigProblemBanner, error: Exception) -> None:
    """A reload was refused: if the `banner` is up, it shows the file's latest problem."""
    from forge.config.errors import ConfigError

    if banner.problem and isinstance(error, ConfigError) and error.source == "file":
        banner.show_problem(_where(error), _message(error))
