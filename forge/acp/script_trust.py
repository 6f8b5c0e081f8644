"""A trusted workspace definition or script that changed, asked about through the editor.

Before each turn `forge acp` looks for trusted definitions that changed — `.forge/mcp.yaml`,
the hook files, skills, or a workspace script one of them names. Their MCP servers stop and
their hooks are left out at once; then the editor is asked with `session/request_permission`:
*Trust the changed definitions* (stored, as the TUI's *Trust*; the servers start again with
the new code) or *Not now* (nothing of the workspace runs this session). Issue 34,
docs/adr/0047.
"""

from __future__ import annotations

from acp import update_agent_message_text
from acp.schema import PermissionOption, ToolCallUpdate

from forge.acp.relay import EditorChannel
from forge.session.core import Session
from forge.session.trust_changes import apply_trust, changed_lines, stop_changed

QUESTION_ID = "forge-trust-changed-definitions"
"""The tool-call id of the question (no model call: the editor needs one to show it)."""

_OPTIONS = [
    PermissionOption(option_id="trust", name="Trust the changed definitions", kind="allow_always"),
    PermissionOption(option_id="no", name="Not now", kind="reject_once"),
]


async def ask_about_changes(session: Session, channel: EditorChannel) -> None:
    """Stop what changed since it was trusted, ask the editor, and apply the answer."""
    trust = session.servers.trust
    changed = await stop_changed(session)
    if trust is None or not changed:
        return
    files = ", ".join(source.file for source in changed)
    question = ToolCallUpdate(
        tool_call_id=QUESTION_ID,
        title=f"Changed since this workspace was trusted ({files}); run them? "
        + "; ".join(changed_lines(changed)),
        kind="execute",
        status="pending",
    )
    answer = await channel.ask(question, _OPTIONS)
    if getattr(answer.outcome, "option_id", "no") == "trust":
        warning = trust.trust(changed)
        said = f"Trusted the changed definitions of {files}; they run from now on."
        if warning:
            said += f" ({warning})"
    else:
        trust.not_now()
        said = (
            f"Not run this session: what {files} define changed since the workspace was "
            "trusted (Forge asks again at the next start)."
        )
    await apply_trust(session)
    await channel.send(update_agent_message_text(said + "\n"))
