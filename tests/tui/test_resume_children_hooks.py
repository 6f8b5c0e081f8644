"""A reopened session tells the truth about children and hooks (issue 35, docs/adr/0048): the
same session is run live at 80 by 24 cells and reopened with `--continue`, and the two chats are
compared block by block — completed, interrupted and refused `task` children (their status,
their report without the `[subagent]` line of figures, their folded tool calls), a
UserPromptSubmit hook's context and card, Pre/PostToolUse cards, a Stop hook's continuation —
and so are `/rewind`'s lists. Hook text never wears the user's marker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget

from forge.tui.app import ForgeApp
from forge.tui.screens.approval import ApprovalScreen
from forge.tui.widgets.chat_blocks import ExpansionBlock, ToolCallBlock
from forge.tui.widgets.hook_notice import HookNoticeBlock
from forge.tui.widgets.subagent_rows import SubagentRows
from tests.agent.hooks.support import command_hook
from tests.agent.hooks.turns_support import emit_json
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    GATE_COMMAND,
    configure,
    install_gate,
    make_app,
    submit,
    wait_idle,
    wait_until,
)
from tests.tui.test_resume_fidelity import block_row

SIZE = (80, 24)
PARENT, CHILD = "gpt-4o", "gpt-4o-mini"


def row(block: Widget) -> str | None:
    """`block_row`, with hook cards, folded expansions and a `task` row's report and calls."""
    if isinstance(block, HookNoticeBlock):
        return f"hook[{block.kind}]: {block.text}"
    if isinstance(block, ExpansionBlock):
        return f"expansion: {block.text}"
    shown = block_row(block)
    if isinstance(block, ToolCallBlock) and block.call.name == "task":
        calls = [str(rows.render()) for rows in block.query(SubagentRows)]
        return f"{shown} | output: {block.output} | calls: {calls}"
    return shown


def rows(app: ForgeApp) -> list[str]:
    return [line for line in map(row, app.chat.children) if line is not None]


def hooks_config(workspace: Path) -> dict[str, Any]:
    flag = workspace.parent / "stop-once"
    stop_once = f"if [ -e {flag} ]; then exit 0; fi; touch {flag}; echo 'run the tests' >&2; exit 2"
    context = {
        "systemMessage": "style guide attached",
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "Follow the style guide.",
        },
    }
    return {
        "UserPromptSubmit": [command_hook(emit_json(context))],
        "PreToolUse": [command_hook(emit_json({"systemMessage": "pre-read check"}), "Read")],
        "PostToolUse": [command_hook(emit_json({"systemMessage": "post-read check"}), "Read")],
        "Stop": [command_hook(stop_once)],
    }


def write_agent(workspace: Path) -> None:
    folder = workspace / ".forge" / "agents"
    folder.mkdir(parents=True)
    (folder / "helper.md").write_text(
        f"---\nname: helper\ndescription: helps\nmodel: {CHILD}\n---\nHelp.\n"
    )


async def test_children_and_hooks_read_the_same_live_and_resumed(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    install_gate(workspace)
    write_agent(workspace)
    (workspace / "notes.txt").write_text("one\ntwo\n", encoding="utf-8")
    task = "task"
    llm_server.enqueue_for(
        PARENT,
        # 1. hooks: Pre/PostToolUse cards around a read, a Stop hook that sends it on once
        ToolCalls([Call("read_file", {"path": "notes.txt"})]),
        Text("Two lines."),
        Text("The tests pass too."),
        # 2. a child that completes
        ToolCalls([Call(task, {"agent": "helper", "prompt": "read notes.txt"}, id="t1")]),
        Text("The helper read them."),
        # 3. a child the user stops while its command runs
        ToolCalls([Call(task, {"agent": "helper", "prompt": "run the gate"}, id="t2")]),
        # 4. a child stopped from its approval dialog (Esc)
        ToolCalls([Call(task, {"agent": "helper", "prompt": "write out.txt"}, id="t3")]),
        # 5. a child whose call the user refuses: it goes on and reports
        ToolCalls([Call(task, {"agent": "helper", "prompt": "write b.txt"}, id="t4")]),
        Text("The helper was refused."),
    )
    llm_server.enqueue_for(
        CHILD,
        ToolCalls([Call("read_file", {"path": "notes.txt"})]),
        Text("notes.txt has two lines"),
        ToolCalls([Call("execute_command", {"command": GATE_COMMAND})]),
        ToolCalls([Call("write_file", {"path": "out.txt", "content": "x\n"})]),
        ToolCalls([Call("write_file", {"path": "b.txt", "content": "x\n"})]),
        Text("not allowed to write b.txt"),
    )
    config = {
        "llm": {"model": PARENT},
        "tools": {"command_allowlist": [GATE_COMMAND], "auto_approve": ["read_file"]},
        "hooks": hooks_config(workspace),
    }
    store = configure(llm_server, monkeypatch, config=config)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "count the notes")
        await wait_idle(pilot)
        await submit(pilot, "have the helper read")
        await wait_idle(pilot)

        await submit(pilot, "have the helper run the gate")
        await wait_until(
            pilot,
            lambda: any("execute_command" in str(r.render()) for r in app.chat.query(SubagentRows)),
            "the child's command to run",
        )
        await pilot.press("escape")
        await wait_idle(pilot)

        await submit(pilot, "have the helper write")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        await pilot.press("escape")
        await wait_idle(pilot)

        await submit(pilot, "have the helper write b")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        await pilot.press("n")
        await pilot.pause()
        await pilot.press(*"no", "enter")
        await wait_idle(pilot)
        live = rows(app)
        live_turns = [point.text for point in app.session.history.rewind_points()]

    # What the live chat showed, so that the comparison compares the right things.
    joined = "\n".join(live)
    assert "[subagent]" not in joined, "the figures line is for the model"
    assert "hook-context" not in joined and "did not let the turn end" not in joined
    assert [line for line in live if line.startswith("user: ")] == [
        "user: count the notes",
        "user: have the helper read",
        "user: have the helper run the gate",
        "user: have the helper write",
        "user: have the helper write b",
    ]
    assert any(line.startswith("hook[blocked]: ⛔ Stop hook blocked") for line in live)
    assert any("PreToolUse hook" in line and "pre-read check" in line for line in live)
    assert any("PostToolUse hook" in line and "post-read check" in line for line in live)
    assert any("(subagent helper) PreToolUse hook" in line for line in live)
    assert sum("style guide attached" in line for line in live) == 5
    tasks = [line for line in live if line.startswith("tool: task")]
    assert len(tasks) == 4
    assert tasks[0].startswith("tool: task ok done | output: notes.txt has two lines | calls:")
    assert "✓ read_file  notes.txt" in tasks[0]
    assert tasks[1].startswith("tool: task error interrupted")
    assert "execute_command" in tasks[1]
    assert tasks[2].startswith("tool: task error interrupted")
    assert tasks[3].startswith("tool: task ok done | output: not allowed to write b.txt")
    assert "✗ write_file  b.txt" in tasks[3]
    assert live_turns == [
        "count the notes",
        "have the helper read",
        "have the helper run the gate",
        "have the helper write",
        "have the helper write b",
    ]

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: resumed.chat.children, "the history")
        await pilot.pause()
        while resumed.chat.older_rows:
            await resumed.chat.load_older_rows()
        for block in resumed.chat.query(ToolCallBlock):
            block.action_unfold()  # live rows were open rows; the child's calls are inside
        await pilot.pause()
        shown = rows(resumed)
        resumed_turns = [point.text for point in resumed.session.history.rewind_points()]
    assert shown == live
    assert resumed_turns == live_turns


async def test_a_session_file_from_before_keeps_hook_text_off_the_users_bar(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """Files written before the typed text and the Stop note were recorded: the hook context
    and the Stop hook's words are still not shown as the user's, nor listed by `/rewind`;
    an interrupted child still reads interrupted."""
    from forge.agent.history.session_file import SessionStore
    from forge.context.conversation import Conversation
    from forge.llm.messages import Message

    store = configure(llm_server, monkeypatch)
    log = SessionStore().create(workspace, "m")
    conversation = Conversation()
    log.attach(conversation)
    figures = {"agent": "helper", "completed": False, "reason": "interrupted", "turns": 1}
    context = '\n\n<hook-context source="UserPromptSubmit">\nctx\n</hook-context>'
    call = {"id": "t1", "name": "task", "arguments": '{"agent": "helper", "prompt": "go"}'}
    report = f"partial\n\n[interrupted]\n\n[subagent] {json.dumps(figures)}"
    records = [
        {"role": "user", "content": f"fix it{context}"},
        {"role": "assistant", "content": "Fixed."},
        {"role": "user", "content": "A Stop hook did not let the turn end yet:\nrun the tests"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "t1",
            "name": "task",
            "content": report,
            "meta": {"subagent": "helper"},
        },
    ]
    for record in records:
        conversation.append(Message.from_record(record))
    app = make_app(store, workspace, resume_latest=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.chat.children, "the history")
        await pilot.pause()
        shown = rows(app)
        turns = [point.text for point in app.session.history.rewind_points()]
    assert "user: fix it" in shown
    assert not any("hook-context" in line or "did not let" in line for line in shown)
    assert "hook[blocked]: ⛔ Stop hook blocked — a Stop hook\nrun the tests" in shown
    task_row = next(line for line in shown if line.startswith("tool: task"))
    assert task_row.startswith("tool: task error interrupted | output: partial")
    assert "[subagent]" not in task_row
    assert turns == ["fix it"]
