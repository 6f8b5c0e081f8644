"""Subagents in the real app (docs/adr/0045): a child's approval request reaches the dialog
labelled with its agent; the status pane shows the running child; its tool calls are folded
under the `task` row; /cost lists each child's cost."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Label

from forge.tui.screens.approval import ApprovalScreen
from forge.tui.widgets.chat_blocks import ToolCallBlock, UserMessageBlock
from forge.tui.widgets.file_hints import FileHints
from forge.tui.widgets.hook_notice import HookNoticeBlock
from forge.tui.widgets.subagent_rows import SubagentRows
from tests.agent.hooks.support import command_hook
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    GATE_COMMAND,
    configure,
    install_gate,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)
PARENT, CHILD = "gpt-4o", "gpt-4o-mini"


def write_agent(workspace: Path) -> None:
    folder = workspace / ".forge" / "agents"
    folder.mkdir(parents=True)
    (folder / "writer.md").write_text(
        f"---\nname: writer\ndescription: writes files\nmodel: {CHILD}\n---\nWrite files.\n"
    )


async def test_a_childs_approval_is_labelled_and_its_work_is_folded_under_the_task_row(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    write_agent(workspace)
    llm_server.enqueue_for(
        PARENT,
        ToolCalls([Call("task", {"agent": "writer", "prompt": "write notes.txt"}, id="t1")]),
        Text("The writer is done.", prompt_tokens=1000, completion_tokens=10),
    )
    llm_server.enqueue_for(
        CHILD,
        ToolCalls(
            [Call("write_file", {"path": "notes.txt", "content": "hi\n"})],
            prompt_tokens=2000,
            completion_tokens=20,
        ),
        Text("notes.txt written", prompt_tokens=2100, completion_tokens=5),
    )
    config = {"llm": {"model": PARENT}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "have the writer write notes")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        dialog = app.screen
        assert isinstance(dialog, ApprovalScreen)
        assert dialog.request.agent == "writer"
        title = str(dialog.query_one("#approval-title", Label).render())
        assert "write_file" in title and "subagent writer" in title
        assert "writer only" in str(dialog.query_one("#approve-always", Button).label)
        panel = str(app.status.subagents.render())
        assert "writer" in panel, "the status pane shows the running child"
        await pilot.press("y")
        await wait_idle(pilot)

        assert (workspace / "notes.txt").read_text() == "hi\n"
        (task_row,) = [b for b in app.chat.query(ToolCallBlock) if b.call.name == "task"]
        assert task_row.status == "ok"
        assert "notes.txt written" in task_row.output
        rows = task_row.query_one(SubagentRows)
        assert "write_file" in str(rows.render())
        # The child's call has no row of its own in the chat: it is folded under the task.
        assert [b.call.name for b in app.chat.query(ToolCallBlock)] == ["task"]
        assert not app.status.subagents.children_running

        assert "\n  sub.  $" in str(app.status.query_one("#cost").render())
        await submit(pilot, "/cost")
        details = notices(app)[-1]
        # One line per `task` call, named by the agent and its prompt's first words.
        assert f"| subagent writer: write notes.txt | `{CHILD}` | 2 | 4,100 |" in details
        assert "subagents $" in details


async def test_two_children_of_one_agent_are_told_apart_and_their_cost_shows_at_once(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """Issue 35: two running `reviewer`s read apart in the status pane (their prompts' first
    words); a running child's finished requests are in the status pane's cost at once; `/cost`
    has a line per `task` call, not per agent."""
    release = install_gate(workspace)
    folder = workspace / ".forge" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.md").write_text(
        f"---\nname: reviewer\ndescription: reviews\nmodel: {CHILD}\n---\nReview.\n"
    )
    llm_server.enqueue_for(
        PARENT,
        ToolCalls(
            [
                Call("task", {"agent": "reviewer", "prompt": "review the parser module"}),
                Call("task", {"agent": "reviewer", "prompt": "check the lexer tests"}),
            ]
        ),
        Text("Both reviewed."),
    )
    gate = ToolCalls(
        [Call("execute_command", {"command": GATE_COMMAND})],
        prompt_tokens=100_000,
        completion_tokens=10,
    )
    llm_server.enqueue_for(CHILD, gate, gate, Text("fine"), Text("fine"))
    config = {"llm": {"model": PARENT}, "tools": {"command_allowlist": [GATE_COMMAND]}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "review both")
        panel = app.status.subagents

        def both_at_the_gate() -> bool:
            return sum("execute_command" in line for line in str(panel.render()).split("\n")) == 2

        await wait_until(pilot, both_at_the_gate, "both children at the gate")
        rows = str(panel.render())
        cost_while_running = str(app.status.query_one("#cost").render())
        release.touch()
        await wait_idle(pilot)
        await submit(pilot, "/cost")
        details = notices(app)[-1]
    assert "▸ reviewer · “review the parser module” · execute_command" in rows
    assert "▸ reviewer · “check the lexer tests” · execute_command" in rows
    assert "\n  sub.  $" in cost_while_running, "the children's first requests count already"
    # 80 columns: one block per line of the table.
    assert f"- **subagent reviewer: review the parser module** `{CHILD}`: " in details
    assert f"- **subagent reviewer: check the lexer tests** `{CHILD}`: " in details


async def test_at_agent_offers_the_agents_and_tab_completes_one(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    write_agent(workspace)
    (workspace / "agenda.txt").write_text("x\n")
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        hints = app.query_one(FileHints)
        app.prompt.focus()
        await pilot.press(*"@agent-w")
        await wait_until(pilot, lambda: hints.active, "the candidates")
        assert hints.candidates[0] == "agent-writer"
        await pilot.press("tab")
        assert app.prompt.text == "@agent-writer "
        await pilot.press(*"then @agen")
        await wait_until(pilot, lambda: hints.active, "the candidates for @agen")
        assert hints.candidates[:2] == ["agent-explore", "agent-writer"]
        assert "agenda.txt" in hints.candidates  # files are still offered


async def test_an_invalid_definition_is_reported_at_start_by_file_and_field(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    folder = workspace / ".forge" / "agents"
    folder.mkdir(parents=True)
    (folder / "broken.md").write_text("---\nname: broken\n---\nNo description.\n")
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        await pilot.pause()
        told = "\n".join(notices(app))
    assert "Some agent definitions were not used" in told
    assert "broken.md" in told and "description" in told and "is required" in told


def test_the_sessions_list_shows_a_childs_session_under_its_parent(tmp_path: Path) -> None:
    from forge.agent.history.session_file import SessionInfo
    from forge.tui.widgets.context_report import sessions_markdown

    def info(session_id: str, updated: float, parent: str = "", agent: str = "") -> SessionInfo:
        return SessionInfo(
            session_id,
            tmp_path,
            "w",
            0.0,
            updated,
            "m",
            3,
            f"title {session_id}",
            parent=parent,
            agent=agent,
        )

    listed = [
        info("child", 3, parent="parent", agent="explore"),
        info("other", 2),
        info("parent", 1),
    ]
    text = sessions_markdown(listed, "other")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == ["other", "parent", "child"]
    assert "└ subagent explore: title child" in rows[2]


async def test_esc_ends_the_turn_with_its_children_and_keeps_their_partial_reports(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    write_agent(workspace)
    llm_server.enqueue_for(
        PARENT,
        ToolCalls([Call("task", {"agent": "writer", "prompt": "look slowly"}, id="t1")]),
        Text("never asked"),
    )
    llm_server.enqueue_for(
        CHILD, Text("half of what I found " + "and more " * 300, chunk_size=8, chunk_delay=0.05)
    )
    config = {"llm": {"model": PARENT}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "have the writer look")
        await wait_until(pilot, lambda: app.status.subagents.children_running, "the child")
        await pilot.pause(0.5)  # some of its answer streamed
        await pilot.press("escape")
        await wait_idle(pilot)
        messages = list(app.session.messages)
        assert not app.status.subagents.children_running
    (report,) = [m for m in messages if m.role == "tool" and m.tool_call_id == "t1"]
    assert report.content.startswith("half of what I found")
    assert "[interrupted by the user before the agent finished]" in report.content
    assert '"completed": false' in report.content
    assert len(llm_server.requests_for(PARENT)) == 1


async def test_a_resumed_at_agent_message_reads_as_typed(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """The instruction `@agent-` adds for the model is not the user's: the resumed chat shows
    the message as it was typed, as the live chat did."""
    llm_server.enqueue(
        ToolCalls([Call("task", {"agent": "explore", "prompt": "find X"})]),
        Text("X is in a.txt."),
        Text("The explorer found X in a.txt."),
    )
    store = configure(llm_server, monkeypatch)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "@agent-explore find X")
        await wait_idle(pilot)
        live = [block.text for block in app.chat.query(UserMessageBlock)]
    assert "call `task`" in llm_server.requests[0].messages[-1]["content"]  # sent to the model
    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: resumed.chat.query(UserMessageBlock), "the history")
        shown = [block.text for block in resumed.chat.query(UserMessageBlock)]
    assert shown == live == ["@agent-explore find X"]


async def test_a_childs_hook_notices_are_shown_labelled_with_its_agent(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """The parent's hooks run for a child's calls: what they print or block is shown in the
    chat as for the parent's calls, naming the subagent."""
    write_agent(workspace)
    llm_server.enqueue_for(
        PARENT,
        ToolCalls([Call("task", {"agent": "writer", "prompt": "look around"}, id="t1")]),
        Text("The writer is done."),
    )
    llm_server.enqueue_for(
        CHILD,
        ToolCalls([Call("list_files", {}), Call("write_file", {"path": "s.txt", "content": "x"})]),
        Text("looked"),
    )
    config = {
        "llm": {"model": PARENT},
        "hooks": {
            "PreToolUse": [command_hook("echo no secrets >&2; exit 2", "Write")],
            "PostToolUse": [command_hook("echo listed by the hook", "Glob")],
        },
    }
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "have the writer look")
        await wait_idle(pilot)
        shown = {block.kind: block.text for block in app.chat.query(HookNoticeBlock)}
    assert "subagent writer" in shown["output"] and "listed by the hook" in shown["output"]
    assert "subagent writer" in shown["blocked"] and "no secrets" in shown["blocked"]
    assert not (workspace / "s.txt").exists()


async def test_a_running_task_row_does_not_repeat_its_agents_name(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """The row's title says "writer: <prompt>"; its running status gives the figures only, so
    the prompt keeps the room at 80 columns. The status pane, a list of children, names it."""
    write_agent(workspace)
    llm_server.enqueue_for(
        PARENT,
        ToolCalls([Call("task", {"agent": "writer", "prompt": "look slowly"}, id="t1")]),
        Text("never asked"),
    )
    llm_server.enqueue_for(CHILD, Text("found " + "more " * 300, chunk_size=8, chunk_delay=0.05))
    config = {"llm": {"model": PARENT}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "have the writer look")
        await wait_until(pilot, lambda: app.status.subagents.children_running, "the child")
        (row,) = app.chat.query(ToolCallBlock)
        status, panel = row.status_text, str(app.status.subagents.render())
        await pilot.press("escape")
        await wait_idle(pilot)
    assert status.startswith("0 turns") or status.startswith("1 turn"), status
    assert "writer" not in status
    assert "▸ writer · " in panel
