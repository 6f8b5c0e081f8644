"""Real summarization runs shown live in the status pane: the tool-call strategy firing during
a turn (progress advancing per finished group), and /compact with instructions."""

from __future__ import annotations

import threading
from collections import deque
from pathlib import Path

import pytest
from textual.message import Message
from textual.widgets import Label, ProgressBar, Static

from forge.agent.events import (
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationProgress,
    SummarizationStarted,
    Trigger,
)
from forge.llm.messages import MessageKind
from forge.tui.messages import TurnEnded
from forge.tui.widgets.chat_blocks import NoticeBlock, SummaryBlock
from tests.support.openai_server import (
    Call,
    Fault,
    OpenAIServer,
    RecordedRequest,
    Reply,
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
FILES = 4


def write_files(workspace: Path) -> None:
    """Files big enough that summarizing a read of one is worth an LLM call."""
    for number in range(1, FILES + 1):
        lines = [f"record {number}-{line}: value {line * number} status ok" for line in range(80)]
        (workspace / f"data{number}.txt").write_text("\n".join(lines) + "\n")


class GatedServer:
    """Answers agent requests from a script and holds each summarization request until the
    test releases it, so the test can look at the status pane between groups."""

    def __init__(
        self,
        server: OpenAIServer,
        agent_replies: list[Reply],
        gates: list[threading.Event],
        summaries: int,
    ) -> None:
        self.agent_replies = deque(agent_replies)
        gates.extend(threading.Event() for _ in range(summaries))
        self.gates = gates
        self.summary_requests: list[RecordedRequest] = []
        server.responder = self.respond

    def respond(self, request: RecordedRequest) -> Reply:
        if request.tools:
            return self.agent_replies.popleft()
        index = len(self.summary_requests)
        self.summary_requests.append(request)
        # Runs on the server's own thread; bounded so a failing test cannot hang it.
        self.gates[index].wait(timeout=30)
        return Text(f"Summary {index}: data file with numbered records, all ok.")


async def test_tool_call_summarization_progress_appears_and_completes(
    llm_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    workspace: Path,
    server_gates: list[threading.Event],
) -> None:
    write_files(workspace)
    reads = [ToolCalls([Call("read_file", {"path": f"data{n}.txt"})]) for n in range(1, FILES + 1)]
    replies: list[Reply] = [*reads, Text("All four files read.")]
    gated = GatedServer(llm_server, replies, server_gates, summaries=3)
    config = {
        "context": {
            "messages_old_threshold": 2,
            "min_tool_calls_to_summarize": 3,
            "max_concurrent_summaries": 1,
            "tool_call_summaries": True,
            "observation_masking": False,
        }
    }
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        panel = app.status.summarization
        label = panel.query_one("#summary-progress-label", Label)
        bar = panel.query_one(ProgressBar)
        await submit(pilot, "read the data files")
        await wait_until(pilot, lambda: panel.state == "running", "the run to start")
        assert "tool_call (auto)" in str(panel.query_one("#summary-details", Static).render())
        assert str(label.render()) == "Summarizing 0/3"
        for done in (1, 2):
            gated.gates[done - 1].set()
            await wait_until(pilot, lambda done=done: panel.done == done, f"group {done}")
            assert str(label.render()) == f"Summarizing {done}/3"
            assert (bar.progress, bar.total) == (done, 3)
            assert panel.state == "running"
        gated.gates[2].set()
        await wait_idle(pilot)
        assert panel.state == "done"
        result = str(panel.query_one("#summary-result", Static).render())
        assert " → " in result and result.endswith(" s")

        context_events = events_of(
            seen, SummarizationStarted | SummarizationProgress | SummarizationCompleted
        )
        started, *progress, completed = context_events
        assert isinstance(started, SummarizationStarted)
        assert (started.strategy, started.trigger, started.items) == ("tool_call", Trigger.AUTO, 3)
        assert [(p.done, p.total) for p in progress] == [(1, 3), (2, 3), (3, 3)]
        assert isinstance(completed, SummarizationCompleted)
        assert completed.tokens_after < completed.tokens_before
        block = app.chat.query_one(SummaryBlock)
        assert block.replaced == 6, "three tool-call groups of two messages"
        assert block.tokens_saved == completed.tokens_before - completed.tokens_after
        summaries = [
            m for m in app.session.agent.conversation.messages if m.kind is MessageKind.SUMMARY
        ]
        assert len(summaries) == 3
    last_agent_request = [r for r in llm_server.requests if r.tools][-1]
    assert "record 1-5:" not in last_agent_request.text(), "data1 was summarized away"
    assert "Summary 0" in last_agent_request.text() or "Summary 1" in last_agent_request.text()


async def test_compact_command_summarizes_with_instructions(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    long_answer = " ".join(
        f"Step {n}: checked module {n} and its tests carefully." for n in range(40)
    )
    for _ in range(4):
        llm_server.enqueue(Text(long_answer, chunk_size=200))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        for number in range(4):
            await submit(pilot, f"task {number}")
            await wait_idle(pilot)
        llm_server.responder = lambda request: Text("Compacted: four tasks, modules checked.")
        turns = sum(isinstance(m, TurnEnded) for m in seen)
        await submit(pilot, "/compact keep the module numbers")
        ended = lambda: sum(isinstance(m, TurnEnded) for m in seen) > turns  # noqa: E731
        await wait_until(pilot, ended, "the compaction to end")
        await wait_idle(pilot)
        events = events_of(seen, object)
        started = [e for e in events if isinstance(e, SummarizationStarted)]
        assert started and started[0].trigger is Trigger.MANUAL
        finished = [
            e for e in events if isinstance(e, SummarizationCompleted | SummarizationFailed)
        ]
        assert isinstance(finished[-1], SummarizationCompleted)
        assert app.status.summarization.state == "done"
        assert app.chat.query_one(SummaryBlock).tokens_saved
        assert app.status.recent_compactions[-1] == finished[-1]
        closing = notices(app)[-1]
        assert closing.startswith("Compacted: ") and " → " in closing, closing
        assert closing.endswith("Instructions: keep the module numbers")
        assert not any(text.startswith("Compacting") for text in notices(app))
        last_block = app.chat.children[-1]
        assert isinstance(last_block, NoticeBlock) and last_block.text == closing, (
            "the outcome line comes after the summary block"
        )
    summary_requests = [r for r in llm_server.requests if not r.tools]
    assert summary_requests, "the summary was written by the model"
    assert all("keep the module numbers" in r.text() for r in summary_requests)


async def session_with_a_failing_summarizer(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, fault: Fault
) -> tuple[list[str], str]:
    """Four file reads with LLM tool-call summaries on `cheap-m`, which answers `fault`;
    returns the chat's notices and the summarization panel's result line."""
    write_files(workspace)
    replies = deque(
        [
            *(
                ToolCalls([Call("read_file", {"path": f"data{n}.txt"})])
                for n in range(1, FILES + 1)
            ),
            Text("All four files read."),
        ]
    )

    def respond(request: RecordedRequest) -> Reply:
        return replies.popleft() if request.tools else fault

    llm_server.responder = respond
    config = {
        "llm": {"summarization_model": "cheap-m", "max_retries": 0},
        "context": {
            "messages_old_threshold": 2,
            "min_tool_calls_to_summarize": 3,
            "tool_call_summaries": True,
            "observation_masking": False,
        },
    }
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "read the data files")
        await wait_idle(pilot)
        assert events_of(seen, SummarizationFailed)
        panel = str(app.status.summarization.query_one("#summary-result", Static).render())
        return notices(app), panel


async def test_a_failing_summarization_model_is_told_in_the_chat_in_plain_words(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    missing = Fault(404, {"error": {"message": "The model `cheap-m` does not exist"}})
    told, panel_text = await session_with_a_failing_summarizer(
        llm_server, monkeypatch, workspace, missing
    )
    # A 404 is permanent: summaries are off for the session, told once, in plain words.
    told = [text for text in told if "cheap-m" in text]
    assert len(told) == 1, told
    assert told[0].startswith("Summaries are off: model cheap-m answered 404")
    assert "shortened instead" in told[0]
    assert told[0].endswith("Fix: /settings → Summarization Model")
    assert "cheap-m answered 404" in panel_text
    assert "Error" not in panel_text, "no exception names"


async def test_a_transient_summary_failure_is_told_in_plain_words_with_what_happens_next(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    overloaded = Fault(500, {"error": {"message": "overloaded"}})
    notices_seen, _ = await session_with_a_failing_summarizer(
        llm_server, monkeypatch, workspace, overloaded
    )
    told = [text for text in notices_seen if "Summarization failed" in text]
    assert told, notices_seen
    assert told[0].startswith("Summarization failed: model `cheap-m` answered HTTP 500")
    assert not any("Summaries are off" in text for text in notices_seen)
