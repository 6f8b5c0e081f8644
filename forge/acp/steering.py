"""`_session/steering`: the steering extension of the Claude and Codex ACP adapters, in
Forge (issue 40, docs/adr/0057).

A client that uses it sends a message typed during a turn as `_session/steering` with
`{sessionId, prompt}` (a `session/prompt`'s shape) instead of a second `session/prompt`, which
Forge refuses while a turn runs (as before, for a client without the extension). Forge adds
the message to the running turn at its next safe point (after the running tool call, before
the next request) and answers `{"outcome": "injected"}`; the turn shows it where it was added
as a `user_message_chunk`. With no turn running Forge answers `{"outcome":
"promptRequired"}` and sends nothing — the client sends it as a prompt (Forge never starts a
detached turn whose end the client would not see). Forge advertises the extension in
`initialize`'s `_meta` (`{"steering": {"supported": true}}`), as the adapters do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.schema import TextContentBlock

from forge.acp import errors
from forge.acp.open_session import OpenSession
from forge.acp.prompt_text import prompt_text

STEERING_METHOD = "session/steering"
"""The extension's name as the SDK hands it over (`_session/steering` on the wire)."""
ADVERTISED = {"steering": {"supported": True}}
"""What `initialize`'s `_meta` says of it."""


def steering_text(params: dict[str, Any], workspace: Path) -> str:
    """The message the request's `prompt` blocks make (text blocks only)."""
    raw = params.get("prompt")
    blocks = [
        TextContentBlock.model_validate(block)
        for block in (raw if isinstance(raw, list) else [])
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    return prompt_text(blocks, workspace)


def steer(opened: OpenSession, params: dict[str, Any]) -> dict[str, Any]:
    """Add the request's message to the session's running turn; the outcome to answer."""
    session = opened.session
    text = steering_text(params, session.workspace)
    if not text.strip():
        raise errors.invalid_params("the steering prompt holds no text Forge can use")
    running = opened.turn is not None and not opened.turn.done()
    if running and session.steer(text):
        return {"outcome": "injected"}
    return {"outcome": "promptRequired"}
