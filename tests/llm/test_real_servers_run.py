"""`forge run` (a real subprocess) completing a two-turn tool task against a loopback server
that behaves like each captured server (issue 12's "done when")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forge.llm.model_info import default_reply_headroom
from tests.headless.test_headless import forge_run, jsonl, types
from tests.support.openai_server import (
    Call,
    Info,
    OpenAIServer,
    Raw,
    RecordedRequest,
    Reply,
    Text,
    ToolCalls,
)
from tests.support.real_servers import (
    UNTERMINATED_ERROR_STREAM,
    litserve_like,
    llama_cpp_python,
    prompt_tokens_estimate,
)


def write_then_complete(request: RecordedRequest) -> Reply:
    """A two-turn tool task: write out.txt, then finish; a request without tools is a
    summarization request and gets a summary."""
    if not request.tools:
        return Text("Summary: the user asked for out.txt; big.txt was read.")
    tool_results = [m for m in request.messages if m["role"] == "tool"]
    if not tool_results:
        return ToolCalls([Call("write_file", {"path": "out.txt", "content": "HELLO\n"})])
    return ToolCalls([Call("task_completion", {"result": "out.txt written"})])


def run(
    server: OpenAIServer,
    workspace: Path,
    task: str = "write out.txt",
    env: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    environment = {"FORGE_LLM__MODEL": "tiny", **(env or {})}
    result = forge_run(server, workspace, "--yes", "--output", "jsonl", task, env=environment)
    assert result.returncode == 0, result.stdout + result.stderr
    records = jsonl(result)
    assert records[-1]["type"] == "turn_finished" and records[-1]["reason"] == "completed"
    return records


def chat_requests(server: OpenAIServer) -> list[RecordedRequest]:
    return [request for request in server.requests if request.tools]


def test_llama_cpp_python_content_null_refused_no_usage_tool_choice_needed(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llama_cpp_python(llm_server, window=100_000)
    llm_server.responder = write_then_complete
    records = run(llm_server, workspace)
    assert (workspace / "out.txt").read_text() == "HELLO\n"
    first, second = chat_requests(llm_server)
    assert first.body["tool_choice"] == "auto"
    assistant = next(m for m in second.messages if m["role"] == "assistant")
    assert assistant["content"] == "" and assistant["tool_calls"]
    assert "usage" not in types(records)  # the server reported none; Forge counted itself


def test_an_overflow_from_an_empty_stream_compacts_and_the_retry_succeeds(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """Reading files grows the prompt past the server's window: the stream comes back empty
    (as llama-cpp-python's did), the whole request states the window, Forge learns it,
    compacts the old file output, and the retry fits."""
    window = 4000
    lines = "".join(f"line {n}: {'word ' * 10}\n" for n in range(160))
    (workspace / "big.txt").write_text(lines)
    for name in ("s1.txt", "s2.txt"):
        (workspace / name).write_text(lines[: len(lines) // 6])
    llama_cpp_python(llm_server, window=window)
    steps = [
        ToolCalls([Call("read_file", {"path": "big.txt"})]),
        ToolCalls([Call("read_file", {"path": "s1.txt"})]),
        ToolCalls([Call("read_file", {"path": "s2.txt"})]),
        ToolCalls([Call("write_file", {"path": "out.txt", "content": "HELLO\n"})]),
        ToolCalls([Call("task_completion", {"result": "out.txt written"})]),
    ]

    def next_step(request: RecordedRequest) -> Reply:
        if not request.tools:
            return Text("Summary: big.txt, s1.txt and s2.txt were read; out.txt is next.")
        return steps.pop(0)

    llm_server.responder = next_step
    records = run(
        llm_server,
        workspace,
        "read the files, then write out.txt",
        # Only the last 4 messages count as recent, so big.txt's output is old by then.
        env={"FORGE_CONTEXT__MESSAGES_OLD_THRESHOLD": "4"},
    )

    assert (workspace / "out.txt").read_text() == "HELLO\n"
    assert steps == []
    sizes = [
        (request.stream, prompt_tokens_estimate(request) > window)
        for request in chat_requests(llm_server)
    ]
    # Three reads fit; the fourth request streams empty and, asked whole, states the window;
    # after compaction the retry (write_file) and the last request fit.
    assert sizes == [(True, False)] * 3 + [(True, True), (False, True)] + [(True, False)] * 2
    started = [r for r in records if r["type"] == "summarization_started"]
    # The overflow starts it; at the learned budget the ordinary trigger may follow (the tool
    # list alone is about a fifth of this tiny window).
    assert started and started[0]["trigger"] == "overflow"
    assert {r["trigger"] for r in started} <= {"overflow", "auto"}
    assert {r["max_tokens"] for r in started} == {window - default_reply_headroom(window)}
    completed = [r for r in records if r["type"] == "summarization_completed"]
    assert completed and completed[-1]["tokens_after"] < started[0]["current_tokens"]
    budget = window - default_reply_headroom(window)
    assert [r["max_tokens"] for r in records if r["type"] == "context_usage"][-1] == budget
    assert "error" not in types(records)


def test_zero_usage_leaves_forge_on_its_own_count(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    litserve_like(llm_server)
    llm_server.responder = write_then_complete
    records = run(llm_server, workspace)
    assert (workspace / "out.txt").read_text() == "HELLO\n"
    assert "usage" not in types(records)
    gauge = [r["current_tokens"] for r in records if r["type"] == "context_usage"]
    # The gauge never falls to the server's zero: it grows with the conversation.
    assert gauge and all(tokens > 100 for tokens in gauge)
    assert gauge == sorted(gauge)


def test_an_unterminated_error_event_reaches_the_user_and_the_task_completes(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """The first attempt ends in LitServe's unterminated error event; the provider retries
    it (a server error, nothing shown yet) and the task completes; the server's words are in
    the log, not lost as a transport error."""
    llm_server.enqueue(Raw(UNTERMINATED_ERROR_STREAM))
    llm_server.responder = write_then_complete
    result = forge_run(
        llm_server,
        workspace,
        "--yes",
        "--output",
        "jsonl",
        "write out.txt",
        env={"FORGE_LLM__MAX_RETRIES": "1", "FORGE_LLM__MODEL": "tiny"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (workspace / "out.txt").read_text() == "HELLO\n"
    assert len(chat_requests(llm_server)) == 3


def test_an_unterminated_error_event_is_the_error_the_user_sees(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Raw(UNTERMINATED_ERROR_STREAM))
    result = forge_run(llm_server, workspace, "--output", "jsonl", "write out.txt")
    assert result.returncode == 1
    error = next(r for r in jsonl(result) if r["type"] == "error")
    assert error["kind"] == "stream_error"
    assert "CUDA out of memory while decoding" in error["message"]


def test_the_budget_is_the_window_the_server_reports_minus_the_reply_headroom(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.info["/props"] = Info({"default_generation_settings": {"n_ctx": 6144}})
    llm_server.responder = write_then_complete
    records = run(llm_server, workspace)
    budgets = [r["max_tokens"] for r in records if r["type"] == "context_usage"]
    # Each call waits up to 2 s for the answer (it normally has it before the first call;
    # a loaded machine may need the second), and never budgets with a guess after it.
    assert budgets[-1] == 6144 - default_reply_headroom(6144)
