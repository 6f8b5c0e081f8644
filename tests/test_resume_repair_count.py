"""A resumed session whose file held lone surrogates (written by an older version) says how
many characters it replaced, in every front end (issue 34): the TUI's resume notice,
`forge run`'s warning and its `result`'s `notices`, and `forge acp`'s message after
`session/load` — real processes, a real app, one session file written by `forge run`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from forge.agent.history.session_file import SessionStore
from tests.acp.conftest import RecordingClient, forge_acp, forge_environment
from tests.headless.test_headless import jsonl
from tests.headless.test_headless_sessions import forge
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, notices, wait_until

SAID = "replaced 2 invalid character(s) (lone surrogates, written by an older version) in 1 line"


def older_session(llm_server: OpenAIServer, workspace: Path) -> str:
    """A session whose recorded answer holds two JSON-escaped lone surrogates."""
    llm_server.enqueue(Text("first answer"))
    first = forge(llm_server, workspace, "run", "--output", "jsonl", "first task")
    session_id = str(jsonl(first)[0]["session_id"])
    path = SessionStore().path_for(session_id)
    path.write_text(path.read_text().replace("first answer", "first \\ud800ans\\udc00wer"))
    return session_id


def test_forge_run_warns_and_its_result_carries_the_count(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    older_session(llm_server, workspace)
    llm_server.enqueue(Text("second answer"))
    continued = forge(
        llm_server, workspace, "--continue", "run", "--output-format", "json", "second"
    )
    assert continued.returncode == 0, continued.stderr
    assert SAID in continued.stderr
    result = json.loads(continued.stdout)
    assert result["type"] == "result"
    assert any(SAID in notice for notice in result["notices"])


async def test_the_tui_resume_notice_carries_the_count(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    older_session(llm_server, workspace)
    app = make_app(configure(llm_server, monkeypatch), workspace, resume_latest=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot, lambda: any("Resumed session" in n for n in notices(app)), "the notice"
        )
        (notice,) = [n for n in notices(app) if "Resumed session" in n]
    assert "needed repair" in notice and SAID in notice


async def test_forge_acp_says_the_count_after_session_load(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    session_id = older_session(llm_server, workspace)
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        await connection.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        for _ in range(100):
            if SAID in client.text():
                break
            await asyncio.sleep(0.1)
    assert f"session file: {SAID}" in client.text()
