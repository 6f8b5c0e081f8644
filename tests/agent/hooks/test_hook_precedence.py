"""The precedence of hooks against the approval policy: a pure function."""

from __future__ import annotations

import pytest

from forge.agent.hooks.precedence import ToolPermission, combine_permission

PROTECTED = ".forge/mcp.yaml is in .forge/, part of Forge's configuration"


def test_read_only_refusal_beats_a_hooks_allow() -> None:
    assert combine_permission("refuse", "allow") == ToolPermission("refuse", "policy")


def test_a_hooks_deny_beats_the_modes_allow_and_carries_its_reason() -> None:
    assert combine_permission("allow", "deny", hook_reason="no rm") == ToolPermission(
        "refuse", "hook", "no rm"
    )


def test_a_hooks_allow_cannot_skip_the_protected_config_ask() -> None:
    assert combine_permission("ask", "allow", protected=PROTECTED) == ToolPermission(
        "ask", "protected", PROTECTED
    )


def test_a_hooks_deny_still_refuses_a_protected_write() -> None:
    assert combine_permission("ask", "deny", protected=PROTECTED).decision == "refuse"


def test_auto_mode_lets_a_protected_write_through_unless_a_hook_objects() -> None:
    # In auto mode the policy allows protected writes (docs/adr/0034); a hook may still ask.
    assert combine_permission("allow", None, protected=PROTECTED).decision == "allow"
    assert combine_permission("allow", "ask", protected=PROTECTED).decision == "ask"


@pytest.mark.parametrize(
    ("policy", "hook", "expected"),
    [
        ("ask", "allow", ("allow", "hook")),
        ("allow", "ask", ("ask", "hook")),
        ("ask", None, ("ask", "policy")),
        ("allow", None, ("allow", "policy")),
        ("refuse", None, ("refuse", "policy")),
        ("refuse", "deny", ("refuse", "policy")),
    ],
)
def test_the_order(policy: str, hook: str | None, expected: tuple[str, str]) -> None:
    permission = combine_permission(policy, hook)  # type: ignore[arg-type]
    assert (permission.decision, permission.decided_by) == expected
