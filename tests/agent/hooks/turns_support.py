"""Helpers for the hooks-in-a-turn tests: a real session on the loopback server whose user
config defines hooks, a hook that records its stdin, and a driver that answers approvals."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from forge.agent.events import (
    AgentEvent,
    ApprovalDecision,
    ApprovalRequested,
    ApprovalVerdict,
    QuestionAsked,
)
from forge.config.settings import LLMSettings
from forge.session.build import SessionOptions, build_session
from forge.session.core import Session
from forge.session.events import AttachmentsAdded, SessionEvent
from tests.agent.hooks.support import write_user_hooks
from tests.support.openai_server import OpenAIServer

KEY = "sk-test-hooks-0123456789abcdef"


def hooked_session(
    server: OpenAIServer,
    workspace: Path,
    definitions: dict[str, Any],
    *,
    mode: str = "ask",
    **options: Any,
) -> Session:
    """A session whose user config.yaml defines `definitions` as its hooks (loaded for real),
    talking to the loopback server."""
    loaded = write_user_hooks(definitions)
    assert not loaded.problems, loaded.problems
    llm = LLMSettings.model_validate(
        {"base_url": server.base_url, "api_key": SecretStr(KEY), "max_retries": 0, "model": "m"}
    )
    settings = loaded.settings.model_copy(update={"llm": llm})
    return build_session(settings, workspace, SessionOptions(mode=mode, **options))


def recorder(log: Path) -> str:
    """A hook command appending its stdin (one JSON object) as one line of `log`."""
    target = shlex.quote(str(log))
    return f"cat >> {target}; echo >> {target}"


def recorded(log: Path) -> list[dict[str, Any]]:
    """The inputs a `recorder` hook received, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def python_hook(code: str) -> str:
    """A hook command running `code` with this test's Python (reads the input as `data`)."""
    script = "import json, sys\ndata = json.load(sys.stdin)\n" + code
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}"


def emit_json(payload: dict[str, Any]) -> str:
    """A hook command printing `payload` as JSON on stdout (exit 0)."""
    return f"printf '%s' {shlex.quote(json.dumps(payload))}"


Answer = Callable[[ApprovalRequested], ApprovalDecision]


def approve(request: ApprovalRequested) -> ApprovalDecision:
    return ApprovalDecision(ApprovalVerdict.APPROVE_ONCE)


async def drive(
    events: AsyncIterator[SessionEvent] | AsyncIterator[AgentEvent], answer: Answer = approve
) -> list[AgentEvent]:
    """Consume a turn (or /compact, or start_hooks) to its end, answering approvals."""
    seen: list[AgentEvent] = []
    async for event in events:
        if isinstance(event, AttachmentsAdded):
            continue
        seen.append(event)
        if isinstance(event, ApprovalRequested):
            event.future.set_result(answer(event))
        elif isinstance(event, QuestionAsked):
            event.future.set_result("yes")
    return seen
