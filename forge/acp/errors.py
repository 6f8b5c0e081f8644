"""The JSON-RPC errors `forge acp` answers bad input with: each says what was wrong and
what to do, and nothing is lost (no session is changed by a refused request)."""

from __future__ import annotations

from acp import RequestError

from forge.config.secrets import redact

AUTH_REQUIRED = -32000
"""ACP's "authentication required"."""
RESOURCE_NOT_FOUND = -32002
"""ACP's "resource not found": an unknown session."""
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

NO_KEY_MESSAGE = (
    "Forge has no API key for its model server. Set FORGE_LLM__API_KEY (or OPENAI_API_KEY, "
    "ANTHROPIC_API_KEY for Anthropic) in the environment the editor starts `forge acp` with, "
    "or put llm.api_key in Forge's config file (`forge config path` shows where), or set it "
    "in Forge's TUI with /settings; then start the session again."
)


def no_api_key() -> RequestError:
    """No key is configured (the message names the three ways to give one)."""
    return RequestError(AUTH_REQUIRED, NO_KEY_MESSAGE, {"fix": "FORGE_LLM__API_KEY"})


def unknown_session(session_id: str, detail: str = "") -> RequestError:
    """A session id this process has not opened (or, for `session/load`, no saved one)."""
    message = detail or (
        f"no open session {session_id!r}: create one with session/new or open a saved one "
        "with session/load"
    )
    return RequestError(RESOURCE_NOT_FOUND, message, {"sessionId": session_id})


def turn_running(session_id: str) -> RequestError:
    """A prompt arrived while the session's turn runs (nothing of it is sent to the model)."""
    return RequestError(
        INVALID_REQUEST,
        f"session {session_id} is already running a turn: wait for its answer or send "
        "session/cancel first (this prompt was not sent)",
        {"sessionId": session_id},
    )


def invalid_params(message: str) -> RequestError:
    """A parameter Forge cannot use (the message says which and why)."""
    return RequestError(INVALID_PARAMS, message)


def internal(message: str) -> RequestError:
    """Forge failed (the model's server, the configuration); secrets masked."""
    return RequestError(INTERNAL_ERROR, redact(message))
