"""A trusted workspace MCP server whose script changes (issue 34): `forge acp` stops the
running server at once (its watcher), asks the editor (`session/request_permission`) before
the next turn, and starts the new script only on *Trust* — a real `forge acp`, a real stdio
MCP server run from a workspace script, the SDK's client."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallUpdate

from forge.agent.trust import WorkspaceTrust
from forge.agent.trust.sources import workspace_sources
from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.mcp.conftest import SERVER_SCRIPT, alive
from tests.support.openai_server import OpenAIServer, Text


def write_server(workspace: Path, version: str) -> None:
    """`server.py`: notes its version and pid in `starts.log`, then serves the test tools."""
    (workspace / "server.py").write_text(
        "import os, runpy, sys\n"
        f"with open('starts.log', 'a') as log: log.write('{version} ' + str(os.getpid()) + '\\n')\n"
        "sys.argv = [sys.argv[0], 'stdio']\n"
        f"runpy.run_path({str(SERVER_SCRIPT)!r}, run_name='__main__')\n"
    )


def starts(workspace: Path) -> list[tuple[str, int]]:
    log = workspace / "starts.log"
    lines = log.read_text().split("\n") if log.exists() else []
    return [(line.split()[0], int(line.split()[1])) for line in lines if line.strip()]


def trusted_workspace(workspace: Path) -> None:
    (workspace / ".forge").mkdir()
    entry = {"command": sys.executable, "args": ["server.py", "stdio"], "startup_timeout": 30}
    (workspace / ".forge" / "mcp.yaml").write_text(json.dumps({"mcpServers": {"tools": entry}}))
    write_server(workspace, "v1")
    assert WorkspaceTrust(workspace).trust(workspace_sources(workspace)) == ""


class AskingClient(RecordingClient):
    """Records, at each question, which of the server's processes still ran."""

    def __init__(self, workspace: Path, answers: list[str]) -> None:
        super().__init__(answers=answers)
        self.running_when_asked: list[list[str]] = []
        self._workspace = workspace

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        running = [version for version, pid in starts(self._workspace) if alive(pid)]
        self.running_when_asked.append(running)
        return await super().request_permission(session_id, tool_call, options)


async def run_two_turns(
    llm_server: OpenAIServer, workspace: Path, answer: str
) -> tuple[AskingClient, str]:
    trusted_workspace(workspace)
    llm_server.enqueue(Text("One."), Text("Two."))
    client = AskingClient(workspace, [answer])
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await connection.prompt(session_id=sid, prompt=prompt_of("first"))
        assert [version for version, _ in starts(workspace)] == ["v1"]
        assert not client.questions
        tools_before = [t["function"]["name"] for t in llm_server.requests[-1].body["tools"]]
        assert any("echo" in name for name in tools_before)
        ((_, first_pid),) = starts(workspace)
        write_server(workspace, "v2")  # a `git pull` brings new code for the trusted server
        # The watcher stops the old server at once, before any prompt asks about it.
        for _ in range(300):
            if not alive(first_pid):
                break
            await asyncio.sleep(0.1)
        assert not alive(first_pid), "the changed server kept running"
        client.clear()
        await connection.prompt(session_id=sid, prompt=prompt_of("second"))
        said = client.text()
    return client, said


async def test_a_changed_server_script_is_stopped_asked_about_and_restarted_on_trust(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    client, said = await run_two_turns(llm_server, workspace, "trust")
    (question, options) = client.questions[0]
    assert len(client.questions) == 1
    assert "server.py" in (question.title or "") and ".forge/mcp.yaml" in (question.title or "")
    assert [option.option_id for option in options] == ["trust", "no"]
    assert client.running_when_asked == [[]]  # the old server was stopped before the question
    assert [version for version, _ in starts(workspace)] == ["v1", "v2"]
    assert "Trusted the changed definitions" in said
    tools = [t["function"]["name"] for t in llm_server.requests[-1].body["tools"]]
    assert any("echo" in name for name in tools)


async def test_not_now_leaves_the_changed_script_stopped(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    client, said = await run_two_turns(llm_server, workspace, "no")
    assert len(client.questions) == 1 and client.running_when_asked == [[]]
    assert [version for version, _ in starts(workspace)] == ["v1"]
    assert "Not run this session" in said
    tools = [t["function"]["name"] for t in llm_server.requests[-1].body["tools"]]
    assert not any("echo" in name for name in tools)
