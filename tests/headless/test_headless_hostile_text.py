"""`forge run` as a real subprocess facing hostile text (issue 20): escape sequences in the
model's answer, in a command's output and in a server's error message never reach the
terminal raw in text mode, and jsonl escapes every control character while keeping the text
exact."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.headless.test_headless import forge_run, jsonl
from tests.support.openai_server import Call, Fault, OpenAIServer, Text, ToolCalls

HOSTILE = (
    "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x1b]2;owned\x1b\\"
    "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\"
    "\x1b[2J\x1b[H\x1b[5A\x1bP+q544e\x1b\\\x07\x9b2J\x9d0;c1\x9c"
)
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def raw_controls(text: str) -> list[str]:
    return RAW_CONTROL.findall(text)


def test_text_output_shows_hostile_sequences_inert(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "hostile.txt").write_text(f"{HOSTILE} in a file\n")
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "cat hostile.txt"})]),
        Text(f"The answer {HOSTILE}\r\nsecond line\rthird", chunk_size=3),
    )
    result = forge_run(llm_server, workspace, "--yes", "show it")

    assert result.returncode == 0, result.stderr
    assert raw_controls(result.stdout) == [] and raw_controls(result.stderr) == []
    # Shown, so the user sees that something tried: ␛ and the control pictures.
    assert "␛]52;c;cHduZWQ=␇" in result.stdout  # the command's output line
    assert "The answer ␛]52;c;cHduZWQ=␇␛]0;owned␇" in result.stdout
    assert "second line\nthird" in result.stdout


def test_a_server_error_message_is_printed_inert(llm_server: OpenAIServer, workspace: Path) -> None:
    llm_server.enqueue(Fault(400, {"error": {"message": f"bad request {HOSTILE}"}}))
    result = forge_run(llm_server, workspace, "--yes", "hello")

    assert result.returncode != 0
    assert "bad request ␛]52" in result.stderr
    assert raw_controls(result.stdout) == [] and raw_controls(result.stderr) == []


def test_jsonl_escapes_every_control_and_keeps_the_text_exact(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text(f"answer {HOSTILE}", chunk_size=5))
    result = forge_run(llm_server, workspace, "--yes", "--output", "jsonl", "hello")

    assert result.returncode == 0, result.stderr
    assert raw_controls(result.stdout.replace("\n", "")) == []
    finished = [r for r in jsonl(result) if r["type"] == "turn_finished"]
    assert finished[-1]["final_text"] == f"answer {HOSTILE}"
    assert json.loads(json.dumps(finished[-1]))["final_text"] == f"answer {HOSTILE}"
