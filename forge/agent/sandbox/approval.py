"""How the sandbox changes the approval of a model's command (docs/adr/0053).

- A command that asks to run unconfined (`unconfined: true`) is asked about like a write to
  Forge's config: in every permission mode but auto, whatever allows the tool otherwise, with
  its reason in the dialog, and an "always" answer approves that call only. In auto mode it
  runs only with `tools.sandbox.allow_unconfined: true`; with `tools.sandbox.mode: on` never.
- With `tools.sandbox.auto_allow: true`, a confined command that would ask runs without a
  dialog (Claude Code's behaviour); one that asks for unconfined still asks.
"""

from __future__ import annotations

from typing import Literal

from forge.agent.modes import PermissionMode
from forge.agent.sandbox.sandbox import CommandSandbox
from forge.agent.tools.registry import PreparedCall

COMMAND_TOOL = "execute_command"
UNCONFINED_PREFIX = "runs outside the sandbox"
"""How the dialog's reason of an unconfined request begins."""
Decision = Literal["allow", "ask", "refuse"]


def unconfined_request(prepared: PreparedCall | None, sandbox: CommandSandbox | None) -> str | None:
    """What the dialog says of a call that asks to leave the sandbox, with the model's
    reason; None for any other call (or when nothing is confined anyway)."""
    if prepared is None or sandbox is None or not sandbox.enabled:
        return None
    if prepared.tool.name != COMMAND_TOOL or prepared.arguments.get("unconfined") is not True:
        return None
    reason = prepared.arguments.get("reason")
    reason_text = reason.strip() if isinstance(reason, str) and reason.strip() else "none given"
    return (
        f"{UNCONFINED_PREFIX} (your files, secrets and the network are reachable); "
        f"the model's reason: {reason_text}"
    )


def unconfined_refusal(sandbox: CommandSandbox | None, mode: PermissionMode) -> str:
    """Why an unconfined run is refused before anyone is asked ("" when it may be asked)."""
    if sandbox is None:
        return ""
    if sandbox.unconfined_refused:
        return sandbox.unconfined_refused + "; the command did not run."
    if mode is PermissionMode.AUTO and not sandbox.allow_unconfined:
        return (
            "auto mode never runs a command outside the sandbox unless "
            "tools.sandbox.allow_unconfined is true; the command did not run. Find a way "
            "that works inside the sandbox, or tell the user what it needs."
        )
    return ""


def confined_auto_allow(
    decision: Decision,
    prepared: PreparedCall | None,
    sandbox: CommandSandbox | None,
    protected: str | None,
) -> Decision:
    """`decision`, turned into "allow" for a confined command when `tools.sandbox.auto_allow`
    is on and nothing else makes it ask."""
    if (
        decision == "ask"
        and not protected
        and prepared is not None
        and prepared.tool.name == COMMAND_TOOL
        and sandbox is not None
        and sandbox.auto_allow
    ):
        return "allow"
    return decision
