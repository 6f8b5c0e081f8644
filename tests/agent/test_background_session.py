"""A whole turn with a background command (issue 40): the model starts a loopback HTTP
server in the background (in the session's sandbox where it runs: a later command shares its
network namespace), reaches it with `curl` in the same turn, reads the server's log, stops it;
nothing of it is left once the session ends (docs/adr/0057)."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from forge.agent.tools.process_groups import group_alive
from forge.session.build import SessionOptions, build_session
from tests.agent.loop_harness import drive, finished
from tests.session.test_session_core import settings_for
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Text, ToolCalls

PORT = re.compile(r"port (\d+)")


def tool_results(request: RecordedRequest) -> list[str]:
    return [str(message["content"]) for message in request.messages if message["role"] == "tool"]


async def test_a_background_server_answers_a_later_curl_and_is_stopped(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "hello.txt").write_text("hello from the workspace\n")
    server = f"{sys.executable} -u -m http.server 0 --bind 127.0.0.1"
    steps: list[str] = []

    def respond(request: RecordedRequest) -> Text | ToolCalls:
        results = tool_results(request)
        if not results:
            steps.append("start")
            return ToolCalls([Call("execute_command", {"command": server, "background": True})])
        last = results[-1]
        port = next((m.group(1) for text in results if (m := PORT.search(text))), None)
        if port is None:  # not listening yet: read again (a short pause keeps the loop calm)
            time.sleep(0.1)
            steps.append("read")
            return ToolCalls([Call("command_output", {"id": "bg1"})])
        if "curl" not in steps:
            steps.append("curl")
            url = f"http://127.0.0.1:{port}/hello.txt"
            return ToolCalls([Call("execute_command", {"command": f"curl -s {url}"})])
        if "log" not in steps:
            steps.append("log")
            return ToolCalls([Call("command_output", {"id": "bg1", "since": 0})])
        if "stop" not in steps:
            steps.append("stop")
            return ToolCalls([Call("command_stop", {"id": "bg1"})])
        assert "stopped" in last
        return Text("the server answered")

    llm_server.responder = respond
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        events = await drive(session.agent.run_turn("start a server and fetch hello.txt"))
        background = session.background
        assert background is not None
        entry = background.get("bg1")
        assert entry is not None
    finally:
        await session.aclose()
        llm_server.responder = None
    assert finished(events).reason == "answered"
    results = tool_results(llm_server.requests[-1])
    curl = next(text for text in results if "hello from the workspace" in text)
    assert curl.endswith("[exit code 0]")
    log = next(text for text in results if '"GET /hello.txt HTTP/1.1" 200' in text)
    assert "Serving HTTP on 127.0.0.1" in log
    assert not entry.running and entry.stopped_by == "stopped"
    assert not group_alive(entry.process.pid)


async def test_the_session_end_ends_its_background_commands_and_says_which(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "sleep 1000", "background": True})]),
        Text("started"),
    )
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        await drive(session.agent.run_turn("start a sleeper"))
        background = session.background
        assert background is not None
        (entry,) = background.running()
        told = session.end_background("exit")
    finally:
        await session.aclose()
    assert told == ["ended background command bg1 `sleep 1000` (exit)"]
    assert not entry.running and not group_alive(entry.process.pid)

    # Resumed, the session says what was running when it stopped; nothing is restarted.
    resumed = build_session(settings_for(llm_server), workspace, SessionOptions(resume_latest=True))
    try:
        assert resumed.background_notices == [
            "When this session stopped, background commands were running: bg1 `sleep 1000`. "
            "They were ended and are not restarted."
        ]
        assert resumed.background is not None and resumed.background.all() == []
    finally:
        await resumed.aclose()
