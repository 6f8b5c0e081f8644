"""Who decides a tool call when hooks and the approval policy disagree (docs/adr/0043).

A pure function the loop calls with the policy's decision (`ApprovalPolicy.decide`, which
already folds in the mode and the protected-config ask) and the PreToolUse outcome's:

1. the policy refuses (read-only mode, a refusal) → refused, whatever a hook says;
2. a hook denies → refused, even when the mode would allow (its reason goes to the model);
3. the write is protected (Forge's own configuration) and the policy asks → ask: a hook's
   allow cannot skip it;
4. a hook asks → ask, even when the mode would allow;
5. a hook allows → allowed without the dialog;
6. otherwise the policy's decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PolicyDecision = Literal["allow", "ask", "refuse"]
"""`forge.agent.approvals.Decision`, repeated here so this module stays free of imports."""
HookDecision = Literal["allow", "ask", "deny"]
Decider = Literal["policy", "hook", "protected"]


@dataclass(frozen=True, slots=True)
class ToolPermission:
    """The final word on one tool call."""

    decision: PolicyDecision
    decided_by: Decider
    reason: str = ""
    """For a hook's deny: the text the model gets; for an ask: what the dialog shows."""


def combine_permission(
    policy: PolicyDecision,
    hook: HookDecision | None,
    *,
    hook_reason: str = "",
    protected: str | None = None,
) -> ToolPermission:
    """The decision for a call the policy judged `policy` and the hooks `hook` (None: no
    opinion). `protected`: `forge.agent.protected_paths.protected_write` of the call."""
    if policy == "refuse":
        return ToolPermission("refuse", "policy")
    if hook == "deny":
        return ToolPermission("refuse", "hook", hook_reason or "refused by a PreToolUse hook")
    if protected and policy == "ask":
        return ToolPermission("ask", "protected", protected)
    if hook == "ask":
        return ToolPermission("ask", "hook", hook_reason)
    if hook == "allow":
        return ToolPermission("allow", "hook", hook_reason)
    return ToolPermission(policy, "policy")
