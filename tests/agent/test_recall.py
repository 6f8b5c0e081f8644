"""Lossless recall (issue 23, ADR 0038): a masked output's placeholder names an id, and the
read-only `recall` tool gives the exact original back from the session file — in a running
session, after `forge --continue run`, and with clear errors for unknown or rewound ids."""

from __future__ import annotations

import json
import re
from pathlib import Path

from forge.agent.history.recall_archive import RecallError, SessionArchive
from forge.agent.history.rewind import rewind_conversation
from forge.agent.history.session_file import SessionStore
from forge.agent.tools.base import ToolContext
from forge.agent.tools.recall import RecallArgs, RecallTool
from forge.context.conversation import Conversation
from forge.llm.messages import ToolCall, assistant, system, tool_result, user
from forge.session.build import build_session
from tests.agent.loop_harness import drive, finished
from tests.headless.test_headless_sessions import forge
from tests.session.test_session_core import settings_for
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Text, ToolCalls

UNPRICED = "local-coder"
"""A model the price table does not list: masking acts as soon as a batch is ready (with cache
prices it waits until removing pays, docs/adr/0050 §3)."""
RECALL = re.compile(r"; recall ([0-9a-f]{6})\]")
FILES = [f"src/m{n}.py" for n in range(6)]


def write_files(workspace: Path) -> None:
    for number, name in enumerate(FILES):
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            f"def function_{number}_{line}(value):  return value * {line}" for line in range(40)
        ]
        path.write_text("\n".join(lines) + "\n")


def reads() -> list[ToolCalls]:
    """Six reads, one per reply: masking (keep 3, batch 3) fires before the seventh request."""
    return [ToolCalls([Call("read_file", {"path": name})]) for name in FILES]


def tool_messages(request: RecordedRequest) -> list[dict[str, object]]:
    return [message for message in request.messages if message["role"] == "tool"]


def first_key(request: RecordedRequest) -> str | None:
    for message in tool_messages(request):
        found = RECALL.search(str(message["content"]))
        if found:
            return found.group(1)
    return None


async def test_the_model_recalls_a_masked_output_word_for_word(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_files(workspace)
    llm_server.enqueue(*reads())

    asked: list[str] = []

    def respond(request: RecordedRequest) -> Text | ToolCalls:
        key = first_key(request)
        if key and not asked:  # the first request after masking: recall, and a bad id
            asked.append(key)
            return ToolCalls([Call("recall", {"id": key}), Call("recall", {"id": "ffffff0"})])
        return Text("done")

    llm_server.responder = respond
    session = build_session(settings_for(llm_server, model=UNPRICED), workspace)
    try:
        events = await drive(session.agent.run_turn("read the modules"))
    finally:
        await session.aclose()
        llm_server.responder = None
    assert finished(events).reason == "answered"

    # The model was told once, in the system prompt, and the tool is offered.
    system_prompt = llm_server.requests[0].messages[0]["content"]
    assert "`recall <id>`" in system_prompt
    assert "recall" in [tool["function"]["name"] for tool in llm_server.requests[0].tools]
    assert all(r.messages[0]["content"] == system_prompt for r in llm_server.requests)

    original = tool_messages(llm_server.requests[1])[0]["content"]  # the first read, unmasked
    masked_request = next(r for r in llm_server.requests if first_key(r))
    placeholder = str(tool_messages(masked_request)[0]["content"])
    assert placeholder.startswith("[output masked to save context: read_file src/m0.py returned")
    final = tool_messages(llm_server.requests[-1])
    recalled, unknown = final[-2], final[-1]
    assert recalled["content"] == original
    assert "function_0_39" in str(recalled["content"])
    assert "no output with id 'ffffff0'" in str(unknown["content"])


def test_forge_run_continue_recalls_from_the_session_file(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_files(workspace)
    llm_server.enqueue(*reads(), Text("read them all"))
    first = forge(
        llm_server, workspace, "run", "--yes", "read the modules", FORGE_LLM__MODEL=UNPRICED
    )
    assert first.returncode == 0, first.stderr
    original = tool_messages(llm_server.requests[1])[0]["content"]
    key = first_key(llm_server.requests[-1])
    assert key is not None, "masking did not fire in the first run"

    llm_server.enqueue(ToolCalls([Call("recall", {"id": key})]), Text("recalled"))
    second = forge(
        llm_server, workspace, "--continue", "run", "what was in m0?", FORGE_LLM__MODEL=UNPRICED
    )
    assert second.returncode == 0, second.stderr
    assert tool_messages(llm_server.requests[-1])[-1]["content"] == original


async def test_an_output_removed_by_rewind_is_a_clear_error(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    log = store.create(tmp_path, "m")
    conversation = Conversation()
    log.attach(conversation)
    call = ToolCall("c1", "read_file", json.dumps({"path": "a.py"}))
    later = ToolCall("c2", "read_file", json.dumps({"path": "b.py"}))
    conversation.append(system("s"))
    conversation.append(user("first"))
    conversation.append(assistant(tool_calls=(call,)))
    kept = tool_result(call, "A" * 50)
    conversation.append(kept)
    second_turn = user("second")
    conversation.append(second_turn)
    conversation.append(assistant(tool_calls=(later,)))
    gone = tool_result(later, "B" * 50)
    conversation.append(gone)
    tool = RecallTool(SessionArchive(log.path))
    context = ToolContext(workspace=tmp_path)
    assert (await tool.run(RecallArgs(id=gone.id[:6]), context)).content == "B" * 50

    rewind_conversation(conversation, log, second_turn.id)
    archive = SessionArchive(log.path)  # as after --continue: read from the file afresh
    assert archive.find(kept.id[:6]).message.content == "A" * 50
    for source in (archive, tool.archive):
        try:
            source.find(gone.id[:6])
        except RecallError as error:
            assert "removed from this conversation by /rewind" in str(error)
        else:
            raise AssertionError("a rewound output was recalled")
    lines = await tool.run(RecallArgs(id=kept.id, start_line=1, end_line=1), context)
    assert lines.content == "A" * 50
