"""`forge run` as a subprocess, continued: resuming sessions (`forge --continue run`,
`forge --resume ID run`), the allowlist without `--yes`, and what `--timeout` leaves behind (no
process, a valid session file). Signals: tests/agent/test_exit_signals.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from forge.agent.history.session_file import SessionStore
from forge.context.conversation import CANCELLED_RESULT
from tests.agent.sandbox.support import processes_with
from tests.headless.test_headless import API_KEY, REPO_ROOT, jsonl
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


def environment(server: OpenAIServer, **extra: str) -> dict[str, str]:
    env = dict(os.environ)  # the conftest's isolated XDG directories
    env.update(
        PYTHONPATH=str(REPO_ROOT),
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY=API_KEY,
        FORGE_LLM__MAX_RETRIES="0",
        **extra,
    )
    return env


def forge(
    server: OpenAIServer, workspace: Path, *argv: str, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    """Run `python -m forge ARGV` (global options first) in `workspace`."""
    return subprocess.run(
        [sys.executable, "-m", "forge", *argv],
        cwd=workspace,
        env=environment(server, **extra_env),
        capture_output=True,
        text=True,
        timeout=90,
    )


def sent_contents(server: OpenAIServer) -> list[str]:
    """The contents of the last request's messages after the system prompt."""
    return [message["content"] for message in server.requests[-1].messages[1:]]


def test_continue_and_resume_reach_the_headless_run(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("first answer"), Text("second answer"), Text("third answer"))
    first = forge(llm_server, workspace, "run", "--output", "jsonl", "first task")
    session_id = jsonl(first)[0]["session_id"]

    continued = forge(llm_server, workspace, "--continue", "run", "--output", "jsonl", "second")
    assert continued.returncode == 0, continued.stderr
    assert jsonl(continued)[0]["session_id"] == session_id
    assert sent_contents(llm_server) == ["first task", "first answer", "second"]

    # A fresh run makes a newer session; --resume still goes back to the first one, named by
    # the random end of its id as `/sessions ID` accepts it.
    llm_server.enqueue(Text("unrelated"))
    forge(llm_server, workspace, "run", "unrelated")
    suffix = session_id.rsplit("-", 1)[1]
    resumed = forge(llm_server, workspace, "--resume", suffix, "run", "--output", "jsonl", "third")
    assert resumed.returncode == 0, resumed.stderr
    assert jsonl(resumed)[0]["session_id"] == session_id
    assert sent_contents(llm_server) == [
        "first task",
        "first answer",
        "second",
        "second answer",
        "third",
    ]


def test_allowlisted_commands_run_without_yes(llm_server: OpenAIServer, workspace: Path) -> None:
    llm_server.enqueue(
        ToolCalls(
            [
                Call("execute_command", {"command": "echo allowed > made.txt"}),
                Call("execute_command", {"command": "echo --version"}),
                Call("execute_command", {"command": "touch forbidden.txt"}),
            ]
        ),
        ToolCalls([Call("task_completion", {"result": "done"})]),
    )
    result = forge(
        llm_server,
        workspace,
        "run",
        "--output",
        "jsonl",
        "run things",
        FORGE_TOOLS__COMMAND_ALLOWLIST='["echo"]',
    )
    assert result.returncode == 0, result.stderr
    records = jsonl(result)
    finished = {r["call_id"]: r for r in records if r["type"] == "tool_call_finished"}
    decisions = [r for r in records if r["type"] == "approval_decision"]
    # A redirect is a shell metacharacter: never allowlisted, so it was rejected too.
    assert [d["verdict"] for d in decisions] == ["reject", "reject"]
    assert not (workspace / "made.txt").exists() and not (workspace / "forbidden.txt").exists()
    ran = [r for r in finished.values() if r["exit_code"] == 0]
    assert len(ran) == 1 and ran[0]["result"].startswith("--version")


def session_messages(session_id: str) -> list[tuple[str, str]]:
    conversation = SessionStore().load(session_id)
    assert conversation.is_valid()
    return [(message.role, message.content) for message in conversation]


def test_timeout_kills_the_running_command_and_leaves_a_valid_session(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "echo started; sleep 7399"})])
    )
    result = forge(
        llm_server, workspace, "run", "--yes", "--timeout", "3", "--output", "jsonl", "wait"
    )

    assert result.returncode == 5  # --timeout (ADR 0015)
    records = jsonl(result)
    assert records[-1]["reason"] == "timeout"
    # `sleep 7399` by its arguments: confined, its pid is its PID namespace's (docs/adr/0053).
    assert processes_with("7399") == []
    messages = session_messages(records[0]["session_id"])
    assert messages[-1] == ("tool", CANCELLED_RESULT)


def test_continue_and_listing_survive_a_corrupt_first_line(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("first answer"), Text("second answer"))
    first = forge(llm_server, workspace, "run", "--output", "jsonl", "first task")
    session_id = jsonl(first)[0]["session_id"]
    path = SessionStore().path_for(session_id)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(["\x00garbage", *lines[1:]]) + "\n")

    listed = forge(llm_server, workspace, "sessions")
    assert session_id in listed.stdout
    assert f"warning: session {session_id}: its header line is unreadable" in listed.stderr

    continued = forge(llm_server, workspace, "--continue", "run", "--output", "jsonl", "second")
    assert continued.returncode == 0, continued.stderr
    assert jsonl(continued)[0]["session_id"] == session_id
    assert "recovered from the first valid record" in continued.stderr
    assert sent_contents(llm_server) == ["first task", "first answer", "second"]
