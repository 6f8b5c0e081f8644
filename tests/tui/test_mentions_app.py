"""`@` completion, attached files and `!commands` in the real app over the loopback server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forge.tui.widgets.chat_blocks import NoticeBlock, ToolCallBlock, UserMessageBlock
from forge.tui.widgets.file_hints import FileHints
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    GATE_COMMAND,
    GATE_CONFIG,
    configure,
    install_gate,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def files(workspace: Path) -> Path:
    write(workspace / ".gitignore", "build/\n")
    write(workspace / "app.py", "print('app')\n")
    write(workspace / "src" / "apple.txt", "fruit\n")
    write(workspace / "docs" / "readme.md", "docs\n")
    write(workspace / "build" / "app_generated.py", "ignored\n")
    write(workspace / "src" / "server.py", "".join(f"line {n}\n" for n in range(1, 21)))
    return workspace


async def test_typing_at_shows_candidates_and_tab_completes(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, files: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), files)
    async with app.run_test(size=SIZE) as pilot:
        hints = app.query_one(FileHints)
        app.prompt.focus()
        await pilot.press(*"look at @ap")
        await wait_until(pilot, lambda: hints.active, "the file candidates")
        assert hints.candidates[:2] == ["app.py", "src/apple.txt"]
        assert "build/app_generated.py" not in hints.candidates  # .gitignore is respected
        await pilot.press("down", "tab")
        assert app.prompt.text == "look at @src/apple.txt "
        await pilot.pause()
        assert not hints.active
        # A line range typed right after the completion joins the path.
        await pilot.press(*":2-3")
        assert app.prompt.text == "look at @src/apple.txt:2-3"
        await pilot.press("space")
        # Enter completes too (and does not send while the list is open).
        await pilot.press(*"and @readm")
        await wait_until(pilot, lambda: hints.active, "the candidates for readm")
        handled = app.inputs_handled
        await pilot.press("enter")
        assert app.prompt.text == "look at @src/apple.txt:2-3 and @docs/readme.md "
        assert app.inputs_handled == handled
        # Esc closes the list; an e-mail address opens none.
        await pilot.press(*"@s")
        await wait_until(pilot, lambda: hints.active, "the candidates for s")
        await pilot.press("escape")
        assert not hints.active and not app.busy
        app.prompt.clear()
        await pilot.press(*"mail ada@ex")
        await pilot.pause()
        assert not hints.has_class("-visible")
    assert llm_server.requests == []


async def test_a_mention_attaches_the_file_visibly_and_sends_its_content(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, files: Path
) -> None:
    llm_server.enqueue(Text("Lines 2 and 3 say hello."))
    app = make_app(configure(llm_server, monkeypatch), files)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "explain @src/server.py:2-3 and @src/missing.py please")
        await wait_idle(pilot)
        rows = [b.text for b in app.chat.query(NoticeBlock) if b.kind == "attachment"]
        told = notices(app)
        order = [type(block).__name__ for block in app.chat.children][-4:]
        conversation = app.session.agent.conversation
        latest = conversation.messages[conversation.latest_user_index() or 0]
        manager = app.session.context_manager
        counted = manager.current_tokens(conversation)
    # The attached row sits right under the message, then the problem, then the answer.
    assert order == ["UserMessageBlock", "NoticeBlock", "NoticeBlock", "AssistantBlock"]
    [sent] = [request.messages[-1]["content"] for request in llm_server.requests]
    assert sent.startswith("explain @src/server.py:2-3 and @src/missing.py please\n\n")
    assert '<attached_file path="src/server.py" lines="2-3" total_lines="20">' in sent
    assert "2 | line 2\n3 | line 3\n</attached_file>" in sent
    assert "line 4" not in sent
    # The attachment is part of the user message the context manager counts.
    assert latest.content == sent
    assert counted >= app.session.counter.count_text(sent)
    [row] = rows
    assert row.startswith("attached src/server.py (lines 2-3, ") and row.endswith(" tokens)")
    assert any(
        "@src/missing.py not attached: no file 'src/missing.py'" in text
        and "sent without it" in text
        for text in told
    )


async def test_a_resumed_session_shows_the_typed_text_and_attached_rows(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, files: Path
) -> None:
    llm_server.enqueue(Text("Seen."))
    store = configure(llm_server, monkeypatch)
    app = make_app(store, files)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "check @src/server.py:5 ok")
        await wait_idle(pilot)
    resumed = make_app(store, files, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: resumed.session_ready.is_set(), "the resumed session")
        users = [block.text for block in resumed.chat.query(UserMessageBlock)]
        rows = [b.text for b in resumed.chat.query(NoticeBlock) if b.kind == "attachment"]
    assert users == ["check @src/server.py:5 ok"]
    assert rows == ["attached src/server.py (line 5)"]


async def test_bang_runs_a_command_without_the_model_and_the_model_sees_it_next(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, files: Path
) -> None:
    llm_server.enqueue(Text("You listed the files."))
    app = make_app(configure(llm_server, monkeypatch), files)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "!echo hi && ls src")
        await wait_idle(pilot)
        [block] = app.chat.query(ToolCallBlock)
        output, status = block.output, block.status
        assert llm_server.requests == []  # the model was not asked
        assert not block._box.collapsed  # the user's own command shows its output
        await submit(pilot, "what did I run?")
        await wait_idle(pilot)
        assert app.session.agent.conversation.is_valid()
    assert "hi\n" in output and "apple.txt" in output and "[exit code 0]" in output
    assert status == "ok"
    [request] = llm_server.requests
    contents = [message["content"] for message in request.messages]
    assert contents[-1] == "what did I run?"
    assert "$ echo hi && ls src\n" in contents[-2] and "apple.txt" in contents[-2]
    assert request.messages[-2]["role"] == "user"


async def test_bang_can_stay_out_of_the_conversation(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, files: Path
) -> None:
    llm_server.enqueue(Text("Hello."))
    store = configure(llm_server, monkeypatch, config={"tools": {"bang_to_conversation": False}})
    app = make_app(store, files)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "!echo private")
        await wait_idle(pilot)
        await submit(pilot, "hi")
        await wait_idle(pilot)
    assert not any("private" in m["content"] for m in llm_server.requests[0].messages)


async def test_esc_cancels_a_running_bang_command(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, files: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), files)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "!echo $$ > shell.pid; echo started; sleep 30")
        await wait_until(pilot, lambda: (files / "shell.pid").exists(), "the command to start")
        assert app.busy
        await pilot.press("escape")
        await wait_idle(pilot, "the command to be cancelled")
        [block] = app.chat.query(ToolCallBlock)
        status_text = block.status_text
        told = notices(app)
        history = app.session.agent.conversation.messages
    assert status_text == "interrupted"
    assert "Interrupted: you stopped your command." in told
    shell = int((files / "shell.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(shell, 0)
    assert not any("sleep 30" in message.content for message in history)
    assert llm_server.requests == []


async def test_an_empty_bang_and_a_bang_during_a_turn_are_explained(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, files: Path
) -> None:
    release = install_gate(files)
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": GATE_COMMAND})]), Text("gate done")
    )
    app = make_app(configure(llm_server, monkeypatch, config=GATE_CONFIG), files)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "!")
        await pilot.pause()
        assert any("Type a shell command after `!`" in text for text in notices(app))
        await submit(pilot, "open the gate")
        await wait_until(pilot, lambda: len(app.chat.tool_blocks) == 1, "the model's command")
        await submit(pilot, "!touch made-by-bang")
        assert app.prompt.text == "!touch made-by-bang"  # back in the prompt, not run
        assert any("A turn is running" in text for text in notices(app))
        release.touch()
        await wait_idle(pilot)
        history = app.session.agent.conversation
        assert history.is_valid()
    assert not (files / "made-by-bang").exists()
    assert len(llm_server.requests) == 2
