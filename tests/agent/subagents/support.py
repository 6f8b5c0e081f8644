"""Helpers for subagent tests: a session on the loopback server and agent definition files."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from pydantic import SecretStr

from forge.agent.events import AgentEvent, ApprovalRequested, SubagentEvent
from forge.config.settings import LLMSettings, Settings
from forge.session.events import AttachmentsAdded, SessionEvent
from tests.agent.loop_harness import approve_once
from tests.support.openai_server import OpenAIServer

KEY = "sk-test-subagents-0123456789abcdef"
PARENT_MODEL = "parent-model"
CHILD_MODEL = "child-model"


def settings_for(server: OpenAIServer, **sections: object) -> Settings:
    """Settings on the loopback server with the parent's model, plus `sections`."""
    llm = LLMSettings.model_validate(
        {
            "base_url": server.base_url,
            "api_key": SecretStr(KEY),
            "max_retries": 0,
            "model": PARENT_MODEL,
        }
    )
    return Settings.model_validate({"llm": llm, **sections})


def write_agent(
    workspace: Path,
    name: str,
    *,
    model: str = CHILD_MODEL,
    body: str = "You find things.",
    extra: str = "",
    folder: str = ".forge/agents",
) -> Path:
    """An agent definition file in the project."""
    directory = workspace / folder
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.md"
    model_line = f"model: {model}\n" if model else ""
    path.write_text(
        f"---\nname: {name}\ndescription: Finds {name} things\n{model_line}{extra}---\n{body}\n",
        encoding="utf-8",
    )
    return path


async def drive(events: AsyncIterator[SessionEvent], *, approve: bool = True) -> list[AgentEvent]:
    """Consume a turn, approving (or rejecting) every request."""
    from forge.agent.events import ApprovalDecision, ApprovalVerdict

    seen: list[AgentEvent] = []
    async for event in events:
        if isinstance(event, AttachmentsAdded):
            continue
        seen.append(event)
        if isinstance(event, ApprovalRequested):
            decision = (
                approve_once(event) if approve else ApprovalDecision(ApprovalVerdict.REJECT, "no")
            )
            event.future.set_result(decision)
    return seen


def child_events(events: list[AgentEvent]) -> list[SubagentEvent]:
    """The children's events among a turn's."""
    return [event for event in events if isinstance(event, SubagentEvent)]
