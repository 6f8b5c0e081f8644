"""/export and `forge export` (issue 42): a session as the chat showed it, in Markdown (a
golden file: a rejected call, a summary, Forge's notices), or its JSON; secrets masked; the
default path in the workspace, reported."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from forge.agent.events import HookOutput
from forge.agent.history.session_file import SessionStore
from forge.agent.message_meta import with_notices
from forge.cli import main
from forge.config.secrets import KNOWN_SECRETS
from forge.context.conversation import Conversation
from forge.llm.messages import Message, MessageKind, ToolCall, assistant, system, tool_result, user
from forge.tui.transcript_export import export_session, export_target
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until

GOLDEN = Path(__file__).resolve().parent.parent / "fixtures/export/session.md"
SECRET = "sk-export-secret-0123456789abcdef"


def recorded(store: SessionStore, workspace: Path) -> str:
    log = store.create(workspace, "gpt-4o")
    conversation = Conversation()
    log.attach(conversation)
    conversation.append(system("You are Forge."))
    conversation.append(user("write hello.txt"))
    call = ToolCall("call_1", "write_file", '{"path": "hello.txt", "content": "hi"}')
    conversation.append(assistant(tool_calls=(call,)))
    rejected = tool_result(call, "rejected by user: not now")
    hook = HookOutput("PreToolUse", ".claude/settings.json: ./check.sh", "writes are reviewed")
    conversation.append(replace(rejected, meta=with_notices({"rejected": True}, [hook])))
    conversation.append(assistant("I did not write it, as you asked."))
    conversation.append(user("then read notes.txt"))
    read = ToolCall("call_2", "read_file", '{"path": "notes.txt"}')
    conversation.append(assistant(tool_calls=(read,)))
    conversation.append(tool_result(read, "line one\nline two"))
    conversation.append(assistant("It has two lines."))
    summary = Message(
        role="user",
        content="The user had notes.txt read: it has two lines.",
        kind=MessageKind.SUMMARY,
        replaces=tuple(m.id for m in conversation.messages[5:9]),
    )
    conversation.replace_range(5, 9, [summary])
    conversation.append(user("thanks"))
    conversation.append(assistant("You're welcome."))
    log.record_name("hello work")
    return log.id


def test_markdown_reads_as_the_chat_and_matches_the_golden_file(
    tmp_path: Path, workspace: Path
) -> None:
    store = SessionStore(tmp_path / "sessions")
    session_id = recorded(store, workspace)
    text = export_session(store, workspace, session_id)
    text = text.replace(session_id, "SESSION").replace(str(workspace.resolve()), "WORKSPACE")
    if os.environ.get("UPDATE_EXPORT_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()


def test_json_and_secrets_masked_and_the_command_line(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SessionStore()
    session_id = recorded(store, workspace)
    # A secret that reached the file before it was known (e.g. pasted) is masked on export.
    with store.path_for(session_id).open("a", encoding="utf-8") as handle:
        record = assistant(f"the key is {SECRET}").to_record()
        handle.write(json.dumps({"type": "message", "message": record}) + "\n")
    KNOWN_SECRETS.add([SECRET])
    document = json.loads(export_session(store, workspace, session_id, "json"))
    assert document["id"] == session_id and document["name"] == "hello work"
    assert SECRET not in json.dumps(document) and "[redacted]" in json.dumps(document)
    assert main(["-C", str(workspace), "export", session_id[-6:]]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# hello work\n") and SECRET not in out
    target = tmp_path / "out.json"
    assert (
        main(["-C", str(workspace), "export", session_id, "--format", "json", "-o", str(target)])
        == 0
    )
    assert json.loads(target.read_text())["id"] == session_id
    assert main(["-C", str(workspace), "export", "nosuch"]) == 1
    assert export_target(workspace, "X", "md") == workspace / "forge-session-X.md"


async def test_export_in_the_app_writes_the_default_path_and_says_so(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("the answer"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "a question")
        await wait_idle(pilot)
        await submit(pilot, "/export")
        target = workspace / f"forge-session-{app.session.session_id}.md"
        await wait_until(pilot, target.exists, "the export")
        assert "## You\n\na question" in target.read_text()
        assert "### Answer\n\nthe answer" in target.read_text()
