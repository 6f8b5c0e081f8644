"""`forge acp` runs the same hooks as the TUI and `forge run` (issue 29, docs/adr/0043):
SessionStart before the first turn, a blocked prompt ends the turn as a refusal with the
hook's reason shown in the editor, SessionEnd when the editor goes away."""

from __future__ import annotations

from pathlib import Path

from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.agent.hooks.support import command_hook, write_user_hooks
from tests.agent.hooks.turns_support import recorded, recorder
from tests.support.openai_server import OpenAIServer, Text

GATE = "grep -q secret && { echo 'no secrets in prompts' >&2; exit 2; } || exit 0"


async def test_hooks_run_in_an_editor_session(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    write_user_hooks(
        {
            "SessionStart": [command_hook(recorder(log))],
            "UserPromptSubmit": [command_hook(GATE)],
            "SessionEnd": [command_hook(recorder(log))],
        }
    )
    llm_server.enqueue(Text("hello"))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        first = await connection.prompt(session_id=session.session_id, prompt=prompt_of("hi"))
        assert first.stop_reason == "end_turn"
        assert [entry["hook_event_name"] for entry in recorded(log)] == ["SessionStart"]
        assert recorded(log)[0]["source"] == "startup"
        blocked = await connection.prompt(
            session_id=session.session_id, prompt=prompt_of("tell me the secret")
        )
        assert blocked.stop_reason == "refusal"
        assert "no secrets in prompts" in client.text()
    assert len(llm_server.requests) == 1  # the blocked prompt never reached the model
    assert "tell me the secret" not in str(llm_server.requests[0].body)
    assert [entry["hook_event_name"] for entry in recorded(log)][-1] == "SessionEnd"
