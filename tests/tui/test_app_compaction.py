"""/compact and summarization outcomes in the real app against the loopback server: a skip is
neutral ("Nothing to compact yet"), a failure is told as one, and the chat's compaction line
always closes with how it ended. A long session on a small budget summarizes live while
the prompt keeps taking messages."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.message import Message
from textual.notifications import Notify
from textual.widgets import Static

from forge.agent.events import (
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationStarted,
)
from forge.tui.compaction import NOTHING_TO_COMPACT
from forge.tui.widgets.chat_blocks import NoticeBlock, UserMessageBlock
from tests.support.openai_server import (
    Call,
    OpenAIServer,
    RecordedRequest,
    Reply,
    ServerFault,
    Text,
    ToolCalls,
)
from tests.tui.test_app_helpers import (
    configure,
    events_of,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)


def result_text(app: object) -> str:
    """What the summarization panel says about the last run."""
    from forge.tui.app import ForgeApp

    assert isinstance(app, ForgeApp)
    return str(app.status.summarization.query_one("#summary-result", Static).render())


def write_data_files(workspace: Path, count: int = 4) -> None:
    for number in range(1, count + 1):
        lines = [
            f"record {number}-{n}: value {n * number} status ok padding text" for n in range(80)
        ]
        (workspace / f"data{number}.txt").write_text("\n".join(lines) + "\n")


async def test_compact_with_nothing_old_enough_is_neutral_and_closes_its_line(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "/compact")
        await wait_idle(pilot, "the compaction to end")
        skipped = events_of(seen, SummarizationFailed)
        assert skipped and skipped[-1].error.startswith("skipped:"), "the manager skipped"
        line = app.chat.query(NoticeBlock).last()
        assert line.text.startswith(f"{NOTHING_TO_COMPACT}: nothing old enough"), line.text
        assert line.kind == "info", "a skip is not an error"
        assert not any("Compacting" in text for text in notices(app)), "the line was closed"
        panel = app.status.summarization
        assert panel.state == "skipped" and panel.has_class("-skipped")
        assert result_text(app).startswith(NOTHING_TO_COMPACT)
        assert "failed" not in result_text(app)
        await submit(pilot, "/context")
        assert "nothing to compact (nothing old enough" in notices(app)[-1]
    assert llm_server.requests == [], "nothing was sent to a model"


async def test_a_failed_compaction_closes_its_line_with_the_error(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    long_answer = " ".join(f"Step {n}: checked module {n} and its tests." for n in range(80))
    for _ in range(4):
        llm_server.enqueue(Text(long_answer, chunk_size=200))
    config = {"llm": {"max_retries": 0}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        for number in range(4):
            await submit(pilot, f"task {number}")
            await wait_idle(pilot)
        llm_server.responder = lambda request: ServerFault(500)
        await submit(pilot, "/compact")
        await wait_idle(pilot, "the compaction to end")
        failures = events_of(seen, SummarizationFailed)
        assert failures and "500" in failures[-1].error, "the summary request failed"
        assert failures[-1].fallback is None, "well inside the budget: nothing to fall back on"
        line = app.chat.query(NoticeBlock).last()
        assert line.kind == "error"
        assert line.text.startswith("Compaction failed.") and "HTTP 500" in line.text
        assert line.text.endswith("it is tried again when the context fills up."), line.text
        assert not any("Compacting" in text for text in notices(app)), "the line was closed"
        assert app.status.summarization.state == "failed"
        assert "answered HTTP 500" in result_text(app)
        assert sum("Summarization failed" in text for text in notices(app)) == 1, "told once"
    assert [m.role for m in app.session.agent.conversation.messages].count("user") == 4


class SmallBudgetServer:
    """Agent requests read the data files one by one, then answer; the first summarization
    request is held until the test releases it."""

    def __init__(self, server: OpenAIServer, files: int, gates: list[threading.Event]) -> None:
        self.files = files
        self.reads = 0
        self.summaries = 0
        self.first_summary_release = threading.Event()
        gates.append(self.first_summary_release)
        server.responder = self.respond

    def respond(self, request: RecordedRequest) -> Reply:
        if not request.tools:
            self.summaries += 1
            if self.summaries == 1:
                # Runs on the server's thread; bounded so a failing test cannot hang it.
                self.first_summary_release.wait(timeout=30)
            return Text("Read a data file of numbered records; all of them were ok.")
        last_user = next(m for m in reversed(request.messages) if m["role"] == "user")
        if last_user["content"] != "read the data files" or self.reads >= self.files:
            return Text(f"Done with: {last_user['content']}")
        self.reads += 1
        return ToolCalls([Call("read_file", {"path": f"data{self.reads}.txt"})])


async def test_a_long_session_on_a_small_budget_summarizes_live_and_stays_responsive(
    llm_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    workspace: Path,
    server_gates: list[threading.Event],
) -> None:
    write_data_files(workspace, count=4)
    scripted = SmallBudgetServer(llm_server, files=4, gates=server_gates)
    config = {
        "context": {
            # 3000 + the update_plan, recall, task and skill definitions (ADR 0028, 0038,
            # 0045, 0046), recall's query and task's work_ledger and the pinned work ledger
            # (ADR 0050), recall's paging (0047), execute_command's unconfined (0053),
            # web_fetch (0055) and the background commands' tools and argument (0057)
            "max_tokens": 4310,
            "messages_old_threshold": 4,
            "min_tool_calls_to_summarize": 3,
            "max_concurrent_summaries": 1,
            "tool_call_summaries": True,
            "observation_masking": False,
            "ingest_max_share": 1.0,
        }
    }
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        panel = app.status.summarization
        await submit(pilot, "read the data files")
        await wait_until(pilot, lambda: panel.state == "running", "a summarization to start")
        assert app.status.gauge.fraction > 0.9, "the gauge shows the budget nearly full"
        assert app.status.gauge.has_class("-critical")
        await submit(pilot, "a follow-up typed meanwhile")
        queued = [b for b in app.chat.query(UserMessageBlock) if b.has_class("-queued")]
        assert [b.text for b in queued] == ["a follow-up typed meanwhile"]
        scripted.first_summary_release.set()
        await wait_until(
            pilot, lambda: not app.busy and not app.queued, "the turn and the queued one"
        )
        await wait_idle(pilot)
        started = events_of(seen, SummarizationStarted)
        completed = events_of(seen, SummarizationCompleted)
        assert started and completed
        assert all(run.tokens_after < run.tokens_before for run in completed)
        assert panel.state == "done" and " → " in result_text(app)
        warnings = {
            id(m): m
            for m in seen
            if isinstance(m, Notify) and m.notification.message.startswith("Context at")
        }
        assert len(warnings) <= 2, "at most one context warning toast per turn"
    sent = [r for r in llm_server.requests if r.tools][-1]
    assert sent.messages[-1] == {"role": "user", "content": "a follow-up typed meanwhile"}


async def test_a_manual_compaction_is_titled_as_one_and_its_retries_are_the_summarizers(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    from forge.tui.widgets.chat_blocks import SummaryBlock

    long_answer = " ".join(f"Step {n}: checked module {n} and its tests." for n in range(80))
    for _ in range(4):
        llm_server.enqueue(Text(long_answer, chunk_size=200))
    config = {"llm": {"max_retries": 2, "summarization_model": "beta-model"}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        for number in range(4):
            await submit(pilot, f"task {number}")
            await wait_idle(pilot)
        llm_server.enqueue(ServerFault(500), Text("Summary: four modules were checked."))
        await submit(pilot, "/compact")
        await wait_idle(pilot, "the compaction to end")
        retry = [text for text in notices(app) if "retrying in" in text]
        assert len(retry) == 1 and retry[0].startswith("Summarizer (`beta-model`): retrying in")
        assert "Model `beta-model`" not in retry[0], "not worded as the agent's own retry"
        titles = [str(block.title) for block in app.chat.query(SummaryBlock)]
        assert len(titles) == 1 and "Summarized by /compact (" in titles[0], titles
        assert "(manual)" in str(
            app.status.summarization.query_one("#summary-details", Static).render()
        )
        # The agent's own retry, in a later turn, is still the model's.
        llm_server.enqueue(ServerFault(500), Text("fine"))
        await submit(pilot, "one more")
        await wait_idle(pilot)
        retry = [text for text in notices(app) if "retrying in" in text]
        assert len(retry) == 2 and retry[1].startswith("Model `gpt-4o-mini`: retrying in")


async def test_nothing_to_compact_is_not_kept_once_the_conversation_moves_on(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    long_answer = " ".join(f"Step {n}: checked module {n} and its tests." for n in range(80))
    for _ in range(4):
        llm_server.enqueue(Text(long_answer, chunk_size=200))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.status.summarization
        await submit(pilot, "/compact")
        await wait_idle(pilot, "the compaction to end")
        assert panel.state == "skipped" and result_text(app).startswith(NOTHING_TO_COMPACT)
        await submit(pilot, "task 0")
        await wait_idle(pilot)
        assert panel.state == "idle" and result_text(app) == "idle", "no stale skip"

        for number in range(1, 4):
            await submit(pilot, f"task {number}")
            await wait_idle(pilot)
        llm_server.enqueue(Text("Summary: modules were checked."))
        await submit(pilot, "/compact")
        await wait_idle(pilot, "the compaction to end")
        assert panel.state == "done"
        compacted = result_text(app)
        await submit(pilot, "/compact")  # right after: nothing left that is old enough
        await wait_idle(pilot, "the second compaction to end")
        assert panel.state == "skipped"
        llm_server.enqueue(Text("ok"))
        await submit(pilot, "one more")
        await wait_idle(pilot)
        assert panel.state == "done" and result_text(app) == compacted, "the last compaction"
