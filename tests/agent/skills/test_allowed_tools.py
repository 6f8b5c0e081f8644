"""A skill's `allowed-tools` pre-approve tools only while the skill is loaded in the session,
and a project skill's only in a trusted workspace; a real session (no server call needed)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from forge.agent.skills.trust_source import project_skill_sources
from forge.agent.tools.base import ToolContext
from forge.agent.trust.sources import workspace_sources
from forge.config.settings import LLMSettings, Settings
from forge.llm.messages import ToolCall
from forge.session.build import SessionOptions, build_session
from forge.session.core import Session
from tests.agent.skills.helpers import write_skill

GRANTS = "allowed-tools: Bash(git status:*) write_file\n"


def settings() -> Settings:
    return Settings(
        llm=LLMSettings(base_url="http://127.0.0.1:9/v1", api_key=SecretStr("sk-x"), model="m")
    )


def decide(session: Session, name: str, **arguments: object) -> str:
    call = ToolCall("c1", name, json.dumps(arguments))
    return session.policy.decide(call, session.registry.get(name))


async def load(session: Session, name: str) -> None:
    call = ToolCall("s1", "skill", json.dumps({"name": name}))
    result = await session.registry.execute(call, ToolContext(session.workspace))
    assert not result.is_error, result.content


@pytest.fixture
async def sessions(workspace: Path) -> AsyncIterator[list[Session]]:
    made: list[Session] = []
    yield made
    for session in made:
        await session.aclose()


async def test_a_user_skill_grants_its_tools_only_once_loaded(
    workspace: Path, sessions: list[Session]
) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "forge" / "skills"
    write_skill(user, "status", extra=GRANTS)
    session = build_session(settings(), workspace)
    sessions.append(session)
    assert decide(session, "execute_command", command="git status --short") == "ask"
    await load(session, "status")
    assert decide(session, "execute_command", command="git status --short") == "allow"
    assert decide(session, "write_file", path="a.txt", content="x") == "allow"
    # only the pattern's commands, and never with shell metacharacters
    assert decide(session, "execute_command", command="git push") == "ask"
    assert decide(session, "execute_command", command="git status; rm -rf x") == "ask"
    assert decide(session, "apply_diff", path="a.txt", diff="") == "ask"


async def test_a_project_skill_grants_only_in_a_trusted_workspace(
    workspace: Path, sessions: list[Session]
) -> None:
    write_skill(workspace / ".claude" / "skills", "status", extra=GRANTS)
    untrusted = build_session(settings(), workspace)
    trusted = build_session(settings(), workspace, SessionOptions(trust_workspace=True))
    sessions.extend([untrusted, trusted])
    for session in (untrusted, trusted):
        await load(session, "status")
    assert decide(untrusted, "execute_command", command="git status") == "ask"
    assert decide(trusted, "execute_command", command="git status") == "allow"


async def test_trusting_the_workspace_covers_the_skills_grants_until_they_change(
    workspace: Path, sessions: list[Session]
) -> None:
    path = write_skill(workspace / ".forge" / "skills", "status", extra=GRANTS)
    sources = project_skill_sources(workspace)
    assert [source.file for source in sources] == [".forge/skills"]
    assert sources[0] in workspace_sources(workspace)  # the trust dialog lists it
    assert "pre-approves Bash(git status:*) write_file" in sources[0].programs[0].command
    session = build_session(settings(), workspace)
    sessions.append(session)
    assert session.servers.trust is not None
    session.servers.trust.trust(workspace_sources(workspace))
    await load(session, "status")
    assert decide(session, "execute_command", command="git status") == "allow"
    path.write_text(path.read_text().replace("git status", "git push"), encoding="utf-8")
    # the folder changed since it was trusted: its grants ask again
    assert decide(session, "execute_command", command="git status") == "ask"


async def test_claude_code_tool_names_are_understood(
    workspace: Path, sessions: list[Session]
) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "forge" / "skills"
    write_skill(user, "editing", extra="allowed-tools: Edit, Write\n")
    session = build_session(settings(), workspace)
    sessions.append(session)
    await load(session, "editing")
    assert decide(session, "apply_diff", path="a.txt", diff="") == "allow"
    assert decide(session, "write_file", path="a.txt", content="") == "allow"
    assert decide(session, "execute_command", command="ls") == "ask"
