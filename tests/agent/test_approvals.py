"""ApprovalPolicy: which calls run without asking, and allowlist matching by words."""

from __future__ import annotations

import json
import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge.agent.approvals import ApprovalPolicy
from forge.agent.tools.registry import default_registry
from forge.llm.messages import ToolCall

REGISTRY = default_registry()


def decide(policy: ApprovalPolicy, name: str, **arguments: object) -> str:
    call = ToolCall(id="c1", name=name, arguments=json.dumps(arguments))
    return policy.decide(call, REGISTRY.get(name))


def command_decision(policy: ApprovalPolicy, command: str) -> str:
    return decide(policy, "execute_command", command=command)


@pytest.mark.parametrize(
    "name",
    ["read_file", "list_files", "search_files", "ask_question", "converse", "task_completion"],
)
def test_tools_that_change_nothing_are_allowed(name: str) -> None:
    assert decide(ApprovalPolicy(), name) == "allow"


@pytest.mark.parametrize("name", ["write_file", "apply_diff", "execute_command"])
def test_mutating_tools_ask_by_default(name: str) -> None:
    assert decide(ApprovalPolicy(), name, path="a", content="", command="ls") == "ask"


def test_auto_approved_tools_are_allowed() -> None:
    policy = ApprovalPolicy(auto_approve=["write_file"])
    assert decide(policy, "write_file", path="a", content="") == "allow"
    assert decide(policy, "apply_diff", path="a", blocks=[]) == "ask"


def test_approve_all_allows_everything() -> None:
    policy = ApprovalPolicy(approve_all=True)
    assert command_decision(policy, "rm -rf build; make") == "allow"
    assert decide(policy, "apply_diff", path="a", blocks=[]) == "allow"


def test_approve_always_lasts_for_the_session() -> None:
    policy = ApprovalPolicy()
    assert decide(policy, "apply_diff", path="a", blocks=[]) == "ask"
    policy.approve_always("apply_diff")
    assert decide(policy, "apply_diff", path="b", blocks=[]) == "allow"
    assert policy.approved_this_session == frozenset({"apply_diff"})
    assert decide(policy, "write_file", path="a", content="") == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git status --short",
        "git   status   -sb",
        "'git' status",
        "pytest",
        "pytest -q tests/agent",
        "ls",
    ],
)
def test_allowlisted_commands_are_allowed(command: str) -> None:
    policy = ApprovalPolicy(command_allowlist=["git status", "pytest", "ls"])
    assert command_decision(policy, command) == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "git statusx",
        "git",
        "git push",
        "echo git status",
        "FOO=1 git status",
        "git status; rm -rf /",
        "git status && rm -rf /",
        "git status || true",
        "git status | sh",
        "git status & rm -rf /",
        "git status `rm -rf /`",
        "git status $(rm -rf /)",
        "git status ${HOME}",
        "git status > /etc/passwd",
        "git status < /dev/zero",
        "git status\nrm -rf /",
        "git status (x)",
        "git status 'unterminated",
        "",
        "   ",
    ],
)
def test_other_commands_ask(command: str) -> None:
    policy = ApprovalPolicy(command_allowlist=["git status", "pytest", "ls"])
    assert command_decision(policy, command) == "ask"


def test_allowlist_entries_that_cannot_match_are_harmless() -> None:
    policy = ApprovalPolicy(command_allowlist=["", "   ", "'open quote", "make && make test"])
    assert command_decision(policy, "make") == "ask"
    assert command_decision(policy, "make && make test") == "ask"


def test_a_command_call_with_bad_arguments_asks() -> None:
    policy = ApprovalPolicy(command_allowlist=["ls"])
    call = ToolCall(id="c1", name="execute_command", arguments="{not json")
    assert policy.decide(call, REGISTRY.get("execute_command")) == "ask"
    call = ToolCall(id="c1", name="execute_command", arguments='{"command": ["ls"]}')
    assert policy.decide(call, REGISTRY.get("execute_command")) == "ask"


def test_allowlist_only_applies_to_execute_command() -> None:
    policy = ApprovalPolicy(command_allowlist=["ls"])
    assert decide(policy, "write_file", path="ls", content="ls", command="ls") == "ask"


# --- properties ----------------------------------------------------------------------------

SAFE_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_./=", min_size=1, max_size=8)
WORDS = st.lists(SAFE_WORD, min_size=1, max_size=4)
METACHARACTER = st.sampled_from([";", "&", "|", "`", "$(", "$", ">", "<", "\n", "(", ")"])


@given(entry=WORDS, extra=st.lists(SAFE_WORD, max_size=4))
def test_entry_words_followed_by_plain_arguments_are_allowed(
    entry: list[str], extra: list[str]
) -> None:
    policy = ApprovalPolicy(command_allowlist=[shlex.join(entry)])
    assert command_decision(policy, shlex.join(entry + extra)) == "allow"


@given(entry=WORDS, extra=st.lists(SAFE_WORD, max_size=3), meta=METACHARACTER, tail=SAFE_WORD)
def test_any_metacharacter_means_ask(
    entry: list[str], extra: list[str], meta: str, tail: str
) -> None:
    policy = ApprovalPolicy(command_allowlist=[shlex.join(entry)])
    command = shlex.join(entry + extra) + f" {meta}{tail}"
    assert command_decision(policy, command) == "ask"


@given(entry=WORDS, command=WORDS)
def test_allowed_only_if_the_entry_is_a_word_prefix(entry: list[str], command: list[str]) -> None:
    policy = ApprovalPolicy(command_allowlist=[shlex.join(entry)])
    expected = "allow" if command[: len(entry)] == entry else "ask"
    assert command_decision(policy, shlex.join(command)) == expected


@given(entry=WORDS, suffix=SAFE_WORD)
def test_extending_the_last_word_is_not_a_match(entry: list[str], suffix: str) -> None:
    policy = ApprovalPolicy(command_allowlist=[shlex.join(entry)])
    extended = [*entry[:-1], entry[-1] + suffix]
    assert command_decision(policy, shlex.join(extended)) == "ask"
