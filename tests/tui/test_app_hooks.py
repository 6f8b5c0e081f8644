"""Hooks in the real app (issue 29, docs/adr/0043): a rewritten command is what the approval
dialog shows and what runs; a blocking hook is shown in the chat with its name and message, as
plain text; `/hooks` lists every hook with its source and trust; a project hook runs only once
the workspace is trusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static

from forge.agent.modes import PermissionMode
from forge.tui.app import ForgeApp
from forge.tui.screens.approval import ApprovalScreen
from forge.tui.screens.trust import TrustScreen
from forge.tui.widgets.chat_blocks import ToolCallBlock, UserMessageBlock
from forge.tui.widgets.hook_notice import HookListBlock, HookNoticeBlock
from tests.agent.hooks.support import command_hook, write_project_hooks
from tests.agent.hooks.turns_support import emit_json, recorded, recorder
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    configure,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)


def dialog_text(app: ForgeApp) -> str:
    """Every line the current screen's Statics show."""
    return "\n".join(str(widget.render()) for widget in app.screen.query(Static))


async def test_the_approval_shows_the_command_a_hook_rewrote_and_that_one_runs(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    rewrite = emit_json({"hookSpecificOutput": {"updatedInput": {"command": "echo from-hook"}}})
    config = {"hooks": {"PreToolUse": [command_hook(rewrite, "Bash")]}}
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "echo from-model"})]), Text("Ran.")
    )
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "run it")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        preview = str(app.screen.query_one(".command-preview", Static).render())
        assert "echo from-hook" in preview
        assert "from-model" not in preview
        await pilot.press("y")
        await wait_idle(pilot)
        block = app.chat.query_one(ToolCallBlock)
        assert "from-hook" in block.output
    sent = [m for m in llm_server.requests[1].messages if m["role"] == "assistant"][-1]
    arguments = json.loads(sent["tool_calls"][0]["function"]["arguments"])  # type: ignore[index]
    assert arguments["command"] == "echo from-hook"


async def test_a_hooks_ask_shows_its_reason_and_name_in_the_dialog_even_in_auto_mode(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """Issue 35: `permissionDecision: "ask"` asks in every mode, and the dialog says which
    hook asked and why (Claude Code shows the reason)."""
    asks = emit_json(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": "this touches the deploy folder",
            }
        }
    )
    config = {"hooks": {"PreToolUse": [command_hook(asks, "Bash")]}}
    llm_server.enqueue(ToolCalls([Call("execute_command", {"command": "echo hi"})]), Text("Ok."))
    store = configure(llm_server, monkeypatch, config=config)
    app = make_app(store, workspace)
    app.session.policy.mode = PermissionMode.AUTO
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "deploy")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        shown = str(app.screen.query_one("#approval-hook", Static).render())
        assert app.screen.query_one("#approval-hook", Static).region.height > 0
        assert app.session.policy.mode is PermissionMode.AUTO  # the mode would not have asked
        await pilot.press("y")
        await wait_idle(pilot)
    assert "A hook asks: this touches the deploy folder" in shown
    assert "config.yaml" in shown and "permissionDecision" in shown  # the hook, by its command


async def test_a_blocking_hook_is_shown_with_its_name_as_plain_text(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    guard = command_hook("echo '[bold]no[/bold] writes here' >&2; exit 2", "Write")
    config = {"hooks": {"PreToolUse": [guard]}}
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "a.txt", "content": "x"})]), Text("Okay.")
    )
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write a.txt")
        await wait_idle(pilot)
        [notice] = app.chat.query(HookNoticeBlock)
        assert notice.kind == "blocked"
        shown = str(notice.render())
        assert "PreToolUse hook blocked" in shown
        assert "exit 2" in shown  # the hook, by its command
        assert "[bold]no[/bold] writes here" in shown  # markup stays text
    assert not (workspace / "a.txt").exists()


async def test_a_call_a_hook_blocked_says_so_in_its_row_live_and_resumed(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """The mode is ask: the row of a call a PreToolUse hook refused must not read "refused
    (read-only mode)", neither live nor in the resumed chat."""
    config = {"hooks": {"PreToolUse": [command_hook("echo no >&2; exit 2", "Write")]}}
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "a.txt", "content": "x"})]), Text("Okay.")
    )
    store = configure(llm_server, monkeypatch, config=config)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write a.txt")
        await wait_idle(pilot)
        block = app.chat.query_one(ToolCallBlock)
        live = (block.status, block.status_text)
    assert live == ("rejected", "blocked by a hook")
    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: resumed.chat.query(ToolCallBlock), "the history")
        block = resumed.chat.query_one(ToolCallBlock)
        assert (block.status, block.status_text) == live


async def test_a_malformed_hooks_file_is_told_as_a_file_problem_not_a_config_hook(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """The start-up warning about a hooks file names the file and line; its title does not
    read "config hook" (no hook of the config file failed)."""
    (workspace / ".forge").mkdir()
    (workspace / ".forge" / "hooks.json").write_text('{"hooks": {,}}\n', encoding="utf-8")
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.chat.query(HookNoticeBlock), "the warning")
        [notice] = app.chat.query(HookNoticeBlock)
    assert notice.kind == "warning"
    assert ".forge/hooks.json:1:" in notice.text
    assert notice.text.startswith("⚠ Hooks file problem: ")
    assert "config hook" not in notice.text


async def test_a_prompt_a_hook_blocked_is_marked_not_sent(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """A UserPromptSubmit hook's exit 2 keeps the message from the model and the session: the
    chat must not show it as an ordinary sent message (the resumed chat will not have it)."""
    guard = command_hook("echo no secrets >&2; exit 2")
    config = {"hooks": {"UserPromptSubmit": [guard]}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "my secret is 42")
        await wait_idle(pilot)
        [block] = app.chat.query(UserMessageBlock)
        shown = str(block.render())
        told = notices(app)[-1]
        app.prompt.focus()
        await pilot.press("up")
        recalled = app.prompt.text
    assert recalled == "my secret is 42"
    assert llm_server.requests == []
    assert block.has_class("-not-sent")
    assert shown.startswith("not sent") and "my secret is 42" in shown
    assert "Not sent" in told and "↑" in told


async def test_slash_hooks_lists_every_hook_with_its_source_and_trust(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    write_project_hooks(workspace, {"Stop": [command_hook("./notify.sh")]})
    config = {"hooks": {"PreToolUse": [command_hook("./guard.sh", "Bash|Write")]}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), "the trust dialog")
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen), "its answer")
        await submit(pilot, "/hooks")
        await wait_until(pilot, lambda: app.chat.query(HookListBlock), "the listing")
        text = app.chat.query_one(HookListBlock).text
    assert "PreToolUse, Bash|Write: ./guard.sh — active" in text
    assert "(user config)" in text
    assert ".forge/hooks.json (project file)" in text
    assert "Stop, *: ./notify.sh — not trusted" in text


async def test_a_project_hook_runs_only_once_the_workspace_is_trusted(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "prompts.jsonl"
    write_project_hooks(workspace, {"UserPromptSubmit": [command_hook(recorder(log))]})
    llm_server.enqueue(Text("one"), Text("two"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), "the trust dialog")
        # The dialog's lines may render a frame after it is pushed (flaky on a loaded machine).
        await wait_until(pilot, lambda: "UserPromptSubmit hook" in dialog_text(app), "its lines")
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen), "its answer")
        await submit(pilot, "before")
        await wait_idle(pilot)
        assert recorded(log) == []
        await submit(pilot, "/trust")
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), "the dialog again")
        await pilot.press("t")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen), "trusted")
        # A hooks file holds no servers: the confirmation must not speak of starting them.
        told = next(n for n in notices(app) if n.startswith("Trusted this workspace"))
        assert "servers of" not in told and "`.forge/hooks.json`" in told
        await submit(pilot, "after")
        await wait_idle(pilot)
    assert [i["prompt"] for i in recorded(log)] == ["after"]


async def test_clear_ends_the_session_and_starts_the_next_with_source_clear(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "lifetime.jsonl"
    config = {
        "hooks": {
            "SessionStart": [command_hook(recorder(log))],
            "SessionEnd": [command_hook(recorder(log))],
        }
    }
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(recorded(log)) == 1, "SessionStart")
        await submit(pilot, "/clear")
        await wait_until(pilot, lambda: len(recorded(log)) == 3, "SessionEnd and SessionStart")
    seen = [(i["hook_event_name"], i.get("source") or i.get("reason")) for i in recorded(log)]
    assert seen[:3] == [
        ("SessionStart", "startup"),
        ("SessionEnd", "clear"),
        ("SessionStart", "clear"),
    ]
    assert seen[3:] == [("SessionEnd", "exit")]  # the app closed its session


async def test_an_edited_claude_settings_file_asks_again_and_hooks_lists_the_new_hook(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """Issue 35: `.claude/settings.json` is watched like `.forge/mcp.yaml`: a change mid-session
    raises the trust dialog, and `/hooks` lists what the file says now."""
    settings = write_project_hooks(
        workspace, {"Stop": [command_hook("./first.sh")]}, file=".claude/settings.json"
    )
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), "the trust dialog")
        await pilot.press("t")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen), "trusted")
        await pilot.pause(0.5)  # the watch is registered
        changed = {"Stop": [command_hook("./first.sh")], "PreToolUse": [command_hook("./new.sh")]}
        settings.write_text(json.dumps({"hooks": changed}), encoding="utf-8")
        await wait_until(
            pilot, lambda: isinstance(app.screen, TrustScreen), "the dialog again", deadline=30
        )
        await wait_until(pilot, lambda: "./new.sh" in dialog_text(app), "the new hook in it")
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen), "its answer")
        await submit(pilot, "/hooks")
        await wait_until(pilot, lambda: app.chat.query(HookListBlock), "the listing")
        text = app.chat.query(HookListBlock).last().text
    assert "PreToolUse, *: ./new.sh — not trusted" in text
