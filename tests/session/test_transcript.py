"""The per-turn projection (`forge.session.transcript`, docs/adr/0059): what a turn's events
fold into, which every front end renders from."""

from __future__ import annotations

from forge.agent.events import (
    AssistantMessageDone,
    ErrorEvent,
    HookBlocked,
    MessageDelta,
    ReasoningDelta,
    SummarizationCompleted,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
    TurnFinished,
)
from forge.llm.messages import ToolCall, assistant
from forge.session.events import AttachmentsAdded
from forge.session.transcript import OUTPUT_TAIL, TurnTranscript
from tests.support.session_events import sample_events

READ = ToolCall("c1", "read_file", '{"path": "a.txt"}')
RUN = ToolCall("c2", "execute_command", '{"command": "make"}')


def test_the_answer_is_what_was_streamed_since_the_last_finished_message() -> None:
    transcript = TurnTranscript()
    for text in ("Let me ", "look."):
        transcript.observe(MessageDelta(text))
    transcript.observe(ReasoningDelta("not the answer"))
    assert transcript.answer == "Let me look."
    transcript.observe(AssistantMessageDone(assistant("Let me look.", tool_calls=(READ,))))
    assert transcript.answer == ""
    transcript.observe(MessageDelta("Done"))
    assert (transcript.answer, transcript.streamed) == ("Done", "Let me look.Done")


def test_a_call_is_named_then_runs_prints_and_ends() -> None:
    transcript = TurnTranscript()
    transcript.observe(AssistantMessageDone(assistant("", tool_calls=(READ, RUN))))
    assert [state.call.id for state in transcript.open_calls()] == ["c1", "c2"]
    transcript.observe(ToolCallStarted(RUN))
    transcript.observe(ToolOutputDelta("c2", "building\n"))
    transcript.observe(ToolOutputDelta("c2", "x" * OUTPUT_TAIL))
    state = transcript.call("c2")
    assert state is not None and state.announced and state.started
    assert len(state.output) == OUTPUT_TAIL and state.output.endswith("x")
    end = ToolCallFinished(RUN, "ok", exit_code=0)
    transcript.observe(end)
    assert state.end is end and not state.open
    # The read was refused by the mode: it ends without having started.
    transcript.observe(ToolCallFinished(READ, "refused", is_error=True))
    read = transcript.call("c1")
    assert read is not None and read.announced and not read.started
    assert transcript.open_calls() == []


def test_a_call_that_was_never_named_is_known_by_its_end() -> None:
    transcript = TurnTranscript()
    transcript.observe(ToolOutputDelta("ghost", "ignored"))  # no call, no state
    assert transcript.call("ghost") is None
    transcript.observe(ToolCallFinished(READ, "rejected", is_error=True))
    state = transcript.call("c1")
    assert state is not None and not state.announced and not state.started


def test_notices_summaries_and_the_ending_are_kept_in_order() -> None:
    transcript = TurnTranscript()
    summary = SummarizationCompleted("r1", "tool_call", "m", 3, 90, 40, 1.5, 3)
    transcript.observe(AttachmentsAdded(("attached a.txt",), ("@b.txt: no such file",)))
    transcript.observe(HookBlocked("PreToolUse", "guard", "no"))
    transcript.observe(summary)
    transcript.observe(ErrorEvent("the summary failed", "summarization", fatal=False))
    transcript.observe(ErrorEvent("the server is gone", "transport", fatal=True))
    ending = TurnFinished("error")
    transcript.observe(ending)
    assert transcript.notices == [
        "attached a.txt",
        "not attached: @b.txt: no such file",
        "[hook] PreToolUse blocked by guard: no",
        "[context] tool_call summarized 3 item(s) with m: 90 → 40 tokens in 1.5s (3 LLM call(s))",
        "the summary failed",
    ]
    assert transcript.summaries == [summary] and transcript.ending is ending


async def test_every_event_of_the_union_folds_in() -> None:
    transcript = TurnTranscript()
    for event in sample_events():
        transcript.observe(event)
    assert transcript.ending is not None and transcript.open_calls() == []
