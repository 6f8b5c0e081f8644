"""`forge run` as a real subprocess facing text that is not valid Unicode (issue 34): a lone
surrogate from the server, in a command's output, in a file and on stdin is replaced once at
the edge (U+FFFD), the run finishes and `result` is the last record."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from forge.agent.history.session_file import SessionStore
from tests.agent.test_anthropic_run import anthropic_env
from tests.headless.test_headless import forge_run, jsonl, stream_json
from tests.headless.test_headless_sessions import environment, forge, sent_contents
from tests.support.anthropic_server import Answer, AnthropicServer, Use
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

LONE = "a\ud800b"


def test_a_lone_surrogate_from_the_server_is_replaced_and_result_comes_last(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "out.txt", "content": f"x{LONE}y"})]),
        Text(f"done {LONE} and a pair \U0001f600 split", chunk_size=7),
    )
    result = forge_run(llm_server, workspace, "--yes", "--output-format", "forge-jsonl", "go")

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    records = stream_json(result)
    assert records[-1]["type"] == "result"
    assert "a\ufffdb" in records[-1]["result"]
    assert "\U0001f600" in records[-1]["result"]  # a valid pair split across chunks survives
    assert (workspace / "out.txt").read_text(encoding="utf-8") == "xa\ufffdby"


def test_invalid_bytes_on_stdin_and_in_an_argument_become_replacement_characters(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("one"), Text("two"))
    piped = subprocess.run(
        [sys.executable, "-m", "forge", "run", "-"],
        cwd=workspace,
        env=environment(llm_server),
        input=b"fix \xff\xfe this \xed\xa0\x80 too",
        capture_output=True,
        timeout=90,
    )
    assert piped.returncode == 0, piped.stderr
    assert sent_contents(llm_server)[-1].startswith("fix \ufffd\ufffd this")

    argument = subprocess.run(
        [sys.executable.encode(), b"-m", b"forge", b"run", b"bad \xff byte"],
        cwd=workspace,
        env=environment(llm_server),
        capture_output=True,
        timeout=90,
    )
    assert argument.returncode == 0, argument.stderr
    assert sent_contents(llm_server)[-1] == "bad \ufffd byte"


def test_a_session_written_with_a_lone_surrogate_still_resumes(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("first answer"), Text("second answer"))
    first = forge(llm_server, workspace, "run", "--output", "jsonl", "first task")
    session_id = jsonl(first)[0]["session_id"]
    path = SessionStore().path_for(session_id)
    # What an older version wrote: the JSON escape of a lone surrogate in the answer.
    path.write_text(path.read_text().replace("first answer", "first \\ud800answer"))

    continued = forge(llm_server, workspace, "--continue", "run", "--output", "jsonl", "second")

    assert continued.returncode == 0, continued.stderr
    assert sent_contents(llm_server) == ["first task", "first \ufffdanswer", "second"]
    assert "\\ud800" not in path.read_text().split("second answer")[-1]


def test_lone_surrogates_from_the_messages_api_are_replaced_too(
    anthropic_server: AnthropicServer, llm_server: OpenAIServer, workspace: Path
) -> None:
    anthropic_server.enqueue(
        Answer(
            f"text {LONE}",
            thinking=f"think {LONE}",
            calls=[Use("write_file", {"path": "out.txt", "content": f"x{LONE}"})],
            chunk_size=3,
        ),
        Answer(f"done {LONE} \U0001f600", chunk_size=1),
    )
    env = anthropic_env(anthropic_server)
    result = forge_run(
        llm_server, workspace, "--yes", "--output-format", "forge-jsonl", "go", env=env
    )

    assert result.returncode == 0, result.stderr
    records = stream_json(result)
    assert records[-1]["type"] == "result"
    assert records[-1]["result"] == "done a\ufffdb \U0001f600"
    assert (workspace / "out.txt").read_text(encoding="utf-8") == "xa\ufffdb"
    assert len(anthropic_server.requests) == 2
