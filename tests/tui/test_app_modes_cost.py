"""Permission modes and cost in the real app (docs/adr/0029): Ctrl+T cycles the mode and the
status pane shows it; the pane shows the session's cost split into agent and summarization
requests; /cost details it."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.message import Message
from textual.widgets import Collapsible, Static

from forge.agent.costs import format_dollars
from forge.agent.modes import PermissionMode
from forge.tui.app import ForgeApp
from forge.tui.messages import TurnEnded
from forge.tui.widgets.chat_blocks import ToolCallBlock
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Text, ToolCalls
from tests.tui.test_app import footer_actions
from tests.tui.test_app_helpers import (
    configure,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)


def shown(app: ForgeApp, selector: str) -> str:
    """What the status pane's widget `selector` renders."""
    return str(app.status.query_one(selector, Static).render())


async def test_ctrl_t_cycles_the_mode_and_the_status_pane_shows_it(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        assert "cycle_mode" in footer_actions(app)
        assert shown(app, "#mode") == "mode   ask"
        seen = []
        for _ in range(4):
            await pilot.press("ctrl+t")
            await wait_until(
                pilot,
                lambda: app.status.mode_view.mode is not (seen[-1] if seen else PermissionMode.ASK),
                "the mode to change",
            )
            seen.append(app.session.policy.mode)
            assert shown(app, "#mode") == f"mode   {seen[-1].value}"
        assert seen == [
            PermissionMode.ACCEPT_EDITS,
            PermissionMode.AUTO,
            PermissionMode.READ_ONLY,
            PermissionMode.ASK,
        ]


async def test_read_only_mode_in_the_app_refuses_a_write_without_asking(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "a.txt", "content": "x"})]),
        Text("I will only plan."),
    )
    store = configure(llm_server, monkeypatch, config={"tools": {"mode": "read-only"}})
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        assert app.status.mode_view.mode is PermissionMode.READ_ONLY
        await submit(pilot, "write a.txt")
        await wait_idle(pilot)
        (block,) = app.chat.query(ToolCallBlock)
        # It did not run: shown like a rejection, saying why, not as a failure.
        assert block.has_class("-rejected") and not block.has_class("-error")
        title = str(block.query_one(Collapsible).title)
        assert title == "⊘ write_file  a.txt  · refused (read-only mode)"
    assert not (workspace / "a.txt").exists()
    tool_message = next(m for m in llm_server.requests[1].messages if m["role"] == "tool")
    assert tool_message["content"].startswith("read-only mode: changing files is not allowed")
    assert set(tool_message) <= {"role", "content", "tool_call_id", "name"}  # no meta sent

    # A resumed session shows the call the same way.
    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(resumed.chat.query(ToolCallBlock)), "the history")
        (block,) = resumed.chat.query(ToolCallBlock)
        assert block.has_class("-rejected")
        assert block.folded and block.title_text == title  # a resumed row is folded


async def test_the_status_pane_shows_cost_split_and_cost_details_it(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("some text\n" * 40)

    def respond(request: RecordedRequest) -> Text | ToolCalls:
        if not request.tools:
            return Text("SUMMARY: a.txt was read.", prompt_tokens=10_000, completion_tokens=1_000)
        if request.messages[-1]["role"] == "user":
            return ToolCalls(
                [Call("read_file", {"path": "a.txt"})],
                prompt_tokens=10_000,
                completion_tokens=1_000,
                cached_tokens=5_000,
            )
        return Text("answer", prompt_tokens=10_000, completion_tokens=1_000, cached_tokens=4_000)

    llm_server.responder = respond
    config = {"llm": {"model": "gpt-4o", "summarization_model": "gpt-4o-mini"}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        assert shown(app, "#cost") == "cost   $0.00\n  agent $0.00\n  summ. $0.00"
        await submit(pilot, "read a.txt")
        await wait_idle(pilot)
        # 11k uncached at $2.50, 9k cached at $1.25, 2k out at $10 per million: $0.05875.
        assert shown(app, "#cost") == "cost   $0.06\n  agent $0.06\n  summ. $0.00"
        for text in ("again", "once more"):
            await submit(pilot, text)
            await wait_idle(pilot)
        turns = sum(isinstance(m, TurnEnded) for m in seen)
        await submit(pilot, "/compact")
        await wait_until(
            pilot, lambda: sum(isinstance(m, TurnEnded) for m in seen) > turns, "the compaction"
        )
        await wait_idle(pilot)
        summaries = len([r for r in llm_server.requests if not r.tools])
        assert summaries >= 1
        summary_dollars = summaries * (10_000 * 0.15 + 1_000 * 0.60) / 1e6
        total = 3 * 0.05875 + summary_dollars
        assert shown(app, "#cost") == (
            f"cost   {format_dollars(total)}\n"
            f"  agent $0.18\n  summ. {format_dollars(summary_dollars)}"
        )

        await submit(pilot, "/cost")
        details = notices(app)[-1]
        assert "| agent | `gpt-4o` | 6 | 60,000 | 27,000 | 0 | 6,000 | $0.1762 |" in details
        assert f"| summarization | `gpt-4o-mini` | {summaries} | {summaries * 10_000:,} |" in (
            details
        )
        assert "Estimate:" in details and "Compaction removed" in details
        assert "`gpt-4o`: $2.5 in, $1.25 cached, $2.5 cache write, $10 out" in details


async def test_an_unlisted_model_shows_unknown_cost(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("hello", prompt_tokens=500, completion_tokens=5))
    config = {"llm": {"model": "my-local-model"}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        # Before the first request too: unknown, as /cost says, never "$0.00".
        assert shown(app, "#cost") == "cost   ?\n  agent ?\n  summ. ?"
        await submit(pilot, "hi")
        await wait_idle(pilot)
        # No summary was made yet, on a model the price table does not list either.
        assert shown(app, "#cost") == "cost   ?\n  agent ?\n  summ. ?"
        await submit(pilot, "/cost")
        assert "`my-local-model`: unknown (not in the price table)" in notices(app)[-1]


async def test_an_unlisted_summarization_model_is_unknown_beside_a_priced_agent(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("priced", prompt_tokens=10_000, completion_tokens=100))
    config = {"llm": {"model": "gpt-4o-mini", "summarization_model": "my-local-summarizer"}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        assert shown(app, "#cost") == "cost   ?\n  agent $0.00\n  summ. ?"
        await submit(pilot, "hi")
        await wait_idle(pilot)
        agent = shown(app, "#cost").splitlines()[1].split()[-1]
        assert agent.startswith("$") and agent != "$0.00"
        assert shown(app, "#cost") == f"cost   {agent} + ?\n  agent {agent}\n  summ. ?"


async def test_a_priced_model_keeps_its_cost_shown_beside_an_unlisted_one(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(
        Text("priced", prompt_tokens=10_000, completion_tokens=100),
        Text("local", prompt_tokens=500, completion_tokens=5),
    )
    config = {"llm": {"model": "gpt-4o-mini"}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "hi")
        await wait_idle(pilot)
        priced = shown(app, "#cost").splitlines()[0].split()[-1]
        assert priced.startswith("$") and priced != "$0.00"
        await submit(pilot, "/model my-local-model")
        await submit(pilot, "again")
        await wait_idle(pilot)
        assert shown(app, "#cost").splitlines()[0] == f"cost   {priced} + ?"
        await submit(pilot, "/cost")
        assert f"Session cost: {priced} + unknown" in notices(app)[-1]
