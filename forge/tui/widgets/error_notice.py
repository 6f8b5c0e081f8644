"""An error of the running turn as the chat tells it: what happened in words, the server's
message, and a way forward when there is one."""

from __future__ import annotations

from forge.agent.events import ErrorEvent

_ERROR_TITLES = {
    "authentication": "The server refused the API key",
    "model_not_found": "The server does not know this model",
    "quota_exhausted": "Out of quota",
    "rate_limited": "Rate-limited",
    "server_error": "The server failed",
    "transport": "The server could not be reached",
    "context_overflow": "Too much for the model's context",
}
_ERROR_HINTS = {
    "authentication": "Check the API key in /settings (F2).",
    "model_not_found": "Check the model: /model lists the server's models, /settings changes it.",
    "quota_exhausted": "Add credit to the account, or use another key in /settings (F2).",
    "rate_limited": "Wait a moment, then press Up and Enter to send your message again.",
    "server_error": "Press Up and Enter to send your message again.",
    "transport": "Check the Base URL in /settings (F2) and that the server is running.",
    "context_overflow": "Try /compact, then send your message again (Up).",
}


def error_notice(event: ErrorEvent) -> str:
    """An error for the chat: what happened in words, the server's message, and a way
    forward when there is one."""
    title = _ERROR_TITLES.get(event.kind, event.kind.replace("_", " ").capitalize())
    hint = _ERROR_HINTS.get(event.kind, "")
    return f"**{title}**: {event.message}" + (f"\n\n{hint}" if hint else "")
