"""No request above the window, whatever the user sends (issue 34): a task larger than its
share (`context.user_instruction_share` of `context.max_tokens`) is kept whole in the session
file and sent as its head and tail with a recall key and a notice; `recall` pages through it
(offset, length). A real `forge run` against the loopback server, the task as an argument
and on stdin."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from forge.agent.history.session_file import SessionStore
from tests.headless.test_headless import stream_json
from tests.headless.test_headless_sessions import environment
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Reply, Text, ToolCalls

WINDOW = {"FORGE_CONTEXT__MAX_TOKENS": "16000"}
"""A 16k-token budget: the user's share is 8,000 tokens."""


def task_text(size: int) -> str:
    body = "".join(f"row {n:07d} of the task\n" for n in range(size // 22 + 1))
    return "HEAD-MARK " + body[: size - 20] + " TAIL-MARK"


def run(server: OpenAIServer, workspace: Path, *args: str, stdin: bytes | None = None):  # type: ignore[no-untyped-def]
    return subprocess.run(
        [sys.executable, "-m", "forge", "run", *args],
        cwd=workspace,
        env=environment(server, **WINDOW),
        input=stdin,
        capture_output=True,
        timeout=180,
    )


def recall_then_answer(request: RecordedRequest) -> Reply:
    """First: recall a page of the message the notice names; then answer."""
    if any(m["role"] == "tool" for m in request.messages):
        return Text("done")
    user = next(m for m in request.messages if m["role"] == "user")
    key = re.search(r"recall (\w+) with offset", user["content"])
    assert key is not None, user["content"][-2000:]
    return ToolCalls([Call("recall", {"id": key.group(1), "offset": 100_000, "length": 40})])


def test_a_task_above_its_share_is_sent_as_head_and_tail_and_recalled_in_pages(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    task = task_text(120_000)  # an argument (at most 128 KiB): ~24k tokens against 8,000
    llm_server.responder = recall_then_answer
    result = run(llm_server, workspace, "--output-format", "forge-jsonl", task)

    assert result.returncode == 0, result.stderr
    records = stream_json(result)  # type: ignore[arg-type]
    notice = next(r for r in records if r["type"] == "user_message_shortened")
    assert "more than its share of the context (8,000 tokens)" in notice["text"]
    first = llm_server.requests[0]
    sent = next(m for m in first.messages if m["role"] == "user")["content"]
    assert sent.startswith("HEAD-MARK ") and sent.endswith(" TAIL-MARK")
    assert len(sent) < 40_000 and f"recall {notice['recall_key']}" in sent
    # The recalled page is the original's characters 100,000 to 100,040.
    tool = next(m for m in llm_server.requests[-1].messages if m["role"] == "tool")
    assert tool["content"].startswith(task[100_000:100_040])
    assert "[characters 100,000-100,040 of 120,000; recall" in tool["content"]
    # The session file keeps the whole message.
    session = SessionStore().path_for(records[0]["session_id"]).read_text()
    assert task in session.replace("\\n", "\n")


def test_fifty_megabytes_on_stdin_never_make_a_request_above_the_window(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("read it"))
    task = task_text(50_000_000)
    result = run(llm_server, workspace, "-", stdin=task.encode())

    assert result.returncode == 0, result.stderr
    assert "[context] Your message is 50,000,000 characters" in result.stderr.decode()
    (request,) = llm_server.requests
    assert len(request.text()) < 100_000
    sent = next(m for m in request.messages if m["role"] == "user")["content"]
    assert sent.startswith("HEAD-MARK ") and sent.endswith(" TAIL-MARK")


def test_the_json_result_alone_carries_the_notice(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    # `--output-format json` prints only the `result` object: the notice must be in it.
    llm_server.enqueue(Text("done"))
    result = run(llm_server, workspace, "--output-format", "json", task_text(120_000))

    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["type"] == "result"
    assert len(record["notices"]) == 1
    assert "more than its share of the context (8,000 tokens)" in record["notices"][0]
