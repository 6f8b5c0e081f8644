"""What the chat says first: a one-line hint, or, with no API key, how to set one."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forge.config.settings import Settings

WELCOME_NO_KEY = """\
## Welcome to Forge

No API key is configured yet, so Forge cannot reach a model. Either:

- set `OPENAI_API_KEY` (`ANTHROPIC_API_KEY` for Claude) in your environment and start
  Forge again, or
- open **/settings** (F2), enter an API key (and a Base URL for another
  OpenAI-compatible server), and press Ctrl+S — it applies at once.
"""

READY_HINT = "Type a task and press Enter. **/help** lists commands; Esc interrupts a turn."

NOT_SENT_NO_KEY = (
    "Not sent: no API key yet. Set `OPENAI_API_KEY` and restart, or add one in **/settings** "
    "(F2). Press Up to get your message back."
)
"""Said instead of the whole welcome again when a message is typed before a key is set."""

KEY_ADDED = "API key set — Forge is ready. " + READY_HINT
"""Said when a key arrives while Forge runs (from /settings or an edit of config.yaml)."""


def needs_api_key(settings: Settings) -> bool:
    """True when no key is set and the endpoint is not on this machine (local servers often
    need none)."""
    from forge.config.provider_keys import main_api_key

    if main_api_key(settings.llm).strip():  # ANTHROPIC_API_KEY counts with provider anthropic
        return False
    base_url = settings.llm.effective_base_url
    return not any(host in base_url for host in ("://127.0.0.1", "://localhost", "://[::1]"))
