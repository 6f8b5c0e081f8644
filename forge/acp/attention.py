"""`forge acp`'s attention notice (docs/adr/0049): when a turn ends or waits for an approval,
an extension notification `_forge/attention` with the session, the reason (`turn_end`,
`approval`) and a sentence an editor can show as a desktop notice. ACP has no notification
of its own; an editor that does not know the method ignores it (JSON-RPC notifications get
no answer). `ui.notify: off` sends none.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Protocol

from forge.session.attention import AttentionReason, NotifyMode, attention_text

METHOD = "forge/attention"
"""Sent as `_forge/attention` (the SDK adds the underscore extension methods carry)."""

logger = logging.getLogger(__name__)


class ExtensionClient(Protocol):
    """The part of the ACP client connection this needs."""

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Send an extension notification."""
        ...


async def send_attention(
    client: ExtensionClient | None,
    mode: NotifyMode,
    session_id: str,
    reason: AttentionReason,
    detail: str = "",
) -> None:
    """Tell the editor the session wants the user's attention (unless `mode` is off)."""
    if client is None or mode == "off":
        return
    params = {"sessionId": session_id, "reason": reason, "message": attention_text(reason, detail)}
    with contextlib.suppress(ConnectionError, OSError):  # the editor went away: nothing to tell
        await client.ext_notification(METHOD, params)
