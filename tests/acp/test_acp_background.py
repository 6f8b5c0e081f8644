"""Background commands in an editor (issue 40): the `execute_command` call that started one
stays `in_progress` after the turn, its card streaming the command's output, and completes
when the command ends (docs/adr/0057)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

SERVER = "echo serving; until [ -e go ]; do sleep 0.05; done; echo bye"


def card_text(update: Any) -> str:
    return "".join(getattr(item.content, "text", "") for item in update.content or [])


async def test_a_background_commands_card_stays_in_progress_and_streams(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": SERVER, "background": True}, id="c1")]),
        Text("it runs"),
    )
    client = RecordingClient()
    environment = forge_environment(llm_server, FORGE_TOOLS__MODE="auto")
    async with forge_acp(client, environment, workspace=workspace) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await connection.prompt(session_id=session.session_id, prompt=prompt_of("go"))
        assert answer.stop_reason == "end_turn"

        def card() -> list[Any]:
            return [u for u in client.of_kind("tool_call_update") if u.tool_call_id == "c1"]

        async def until(condition: Any) -> None:
            async with asyncio.timeout(30):
                while not condition():  # noqa: ASYNC110
                    await asyncio.sleep(0.05)

        await until(lambda: any("serving" in card_text(u) for u in card()))
        assert all(u.status in (None, "in_progress") for u in card())  # not closed
        (workspace / "go").touch()
        await until(lambda: card()[-1].status == "completed")
    final = card_text(card()[-1])
    assert "serving\nbye" in final and "exited 0" in final
