"""The parts a settings switch replaces, held in one place.

The `Session` (forge/session) builds one `AgentParts` and gives the same object to its
`Agent`: a switch of provider, context manager, approval policy or command timeout is one
assignment here, read by both (docs/adr/0041-session-api.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from forge.agent.approvals import ApprovalPolicy
from forge.agent.hooks.session_hooks import SessionHooks
from forge.agent.sandbox.sandbox import CommandSandbox
from forge.agent.tools.background import BackgroundCommands
from forge.context.protocols import ContextManagerProtocol
from forge.llm.protocols import Provider


@dataclass
class AgentParts:
    """The conversation's provider, the context manager, the approval policy, the tools'
    command timeout, the hooks and the command sandbox, as the settings now say."""

    provider: Provider
    context_manager: ContextManagerProtocol
    policy: ApprovalPolicy
    command_timeout: float = 120
    hooks: SessionHooks | None = None
    """The session's hooks (docs/adr/0043); None runs none. Children share the parent's."""
    sandbox: CommandSandbox | None = None
    """The sandbox of the model's commands (docs/adr/0053); children share the parent's."""
    background: BackgroundCommands | None = None
    """The session's background commands (docs/adr/0057); a child has none."""
