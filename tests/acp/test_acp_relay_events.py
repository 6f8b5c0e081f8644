"""`forge acp`'s relay handles every event of the session (docs/adr/0059): each class of
`SessionEvent`, enumerated from the union, sends the editor something or is one of the
relay's named drops; a retry, the cost and the context's notices reach the editor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.schema import DeniedOutcome, PermissionOption, RequestPermissionResponse, ToolCallUpdate
from pydantic import SecretStr

from forge.acp.relay import DROPPED, TurnRelay, Update
from forge.config.settings import LLMSettings, Settings
from forge.llm.stream import RetryScheduled
from forge.session.build import build_session
from tests.support.openai_server import OpenAIServer
from tests.support.session_events import event_classes, sample_events


class RecordingChannel:
    """The editor's side of a turn: keeps every update, withdraws every approval question."""

    def __init__(self) -> None:
        self.sent: list[Update] = []
        self.asked: list[ToolCallUpdate] = []

    async def send(self, update: Update) -> None:
        self.sent.append(update)

    async def ask(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        self.asked.append(tool_call)
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


def thoughts(updates: list[Any]) -> str:
    return "".join(u.content.text for u in updates if u.session_update == "agent_thought_chunk")


async def test_every_event_is_sent_to_the_editor_or_named_dropped(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm = LLMSettings.model_validate({"base_url": llm_server.base_url, "api_key": SecretStr("k")})
    session = build_session(Settings(llm=llm), workspace)
    channel = RecordingChannel()
    relay = TurnRelay(session, channel)
    shown: set[type] = set()
    try:
        for event in sample_events():
            before = len(channel.sent) + len(channel.asked)
            await relay.relay(event)
            if len(channel.sent) + len(channel.asked) > before:
                shown.add(type(event))
            if isinstance(event, RetryScheduled):
                assert "retrying in 0.5 s (HTTP 503, retry 1 of 4)" in thoughts(channel.sent)
    finally:
        await session.aclose()
    assert shown.isdisjoint(DROPPED), "a dropped event was sent"
    assert shown | set(DROPPED) == event_classes(), "an event was silently ignored"
    said = thoughts(channel.sent)
    assert "[context] 90% of the 100-token budget used" in said
    assert "[context] tool_call summarized 3 item(s) with m" in said
    assert any(u.session_update == "usage_update" for u in channel.sent)
