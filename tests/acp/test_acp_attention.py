"""`forge acp` tells the editor when a turn ends or waits for an approval (issue 35): an
extension notification `_forge/attention` an editor can turn into a desktop notice;
`ui.notify: off` sends none."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


@dataclass
class AttentiveClient(RecordingClient):
    """An editor that records Forge's extension notifications (the SDK hands the method
    over without the underscore it has on the wire)."""

    notices: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notices.append((method, params))


async def test_a_turn_end_and_an_approval_send_an_attention_notice(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(ToolCalls([Call("execute_command", {"command": "echo hi"})]))
    llm_server.enqueue(Text("Done."))
    client = AttentiveClient(answers=["reject_once"])
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await connection.prompt(session_id=session.session_id, prompt=prompt_of("go"))
    assert answer.stop_reason == "end_turn"
    reasons = [(method, params["reason"]) for method, params in client.notices]
    assert reasons == [("forge/attention", "approval"), ("forge/attention", "turn_end")]
    approval, turn_end = (params for _, params in client.notices)
    assert approval["sessionId"] == session.session_id
    assert approval["message"].startswith("Waiting for your approval")
    assert turn_end["message"] == "The turn ended (end_turn)"


async def test_notify_off_sends_no_attention_notice(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("Quiet."))
    client = AttentiveClient()
    environment = forge_environment(llm_server, FORGE_UI__NOTIFY="off")
    async with forge_acp(client, environment, workspace=workspace) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        await connection.prompt(session_id=session.session_id, prompt=prompt_of("hush"))
    assert client.text() == "Quiet."
    assert client.notices == []
