"""`forge acp` and the command sandbox (docs/adr/0053): `/sandbox` answers what confines the
model's commands, and a model's command run through the editor is confined (no key, no
write outside the workspace)."""

from __future__ import annotations

from pathlib import Path

from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.acp.test_acp_prompt import rendered_lines
from tests.agent.sandbox.support import needs_bubblewrap
from tests.support.openai_server import OpenAIServer, Text


@needs_bubblewrap
async def test_the_sandbox_command_says_what_confines_the_commands(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("Hello."))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        sid = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await connection.prompt(session_id=sid, prompt=prompt_of("/sandbox"))
        lines = rendered_lines(client.text())
    assert lines[0].startswith("Sandbox: on (bubblewrap, no network)"), lines
    assert any("network: none" in line for line in lines), lines
    assert not llm_server.requests  # answered by Forge, not the model
