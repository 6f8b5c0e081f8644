"""The one dispatcher (docs/adr/0016): every core event has a route, and each reaches the
widget that shows it as its own typed message, handled there."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
from textual.message import Message
from textual.message_pump import MessagePump, active_message_pump

from forge.agent.events import SummarizationCompleted
from forge.tui.event_dispatch import EventDispatcher, Region
from forge.tui.messages import EventMessage, RequestResumed, SummarizationCompletedShown, TurnEnded
from forge.tui.widgets.summarization_panel import SummarizationPanel
from tests.support.openai_server import OpenAIServer, Text
from tests.support.session_events import event_classes, sample_events
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until

SIZE = (120, 40)


async def test_every_event_of_the_union_reaches_a_region_as_its_own_message() -> None:
    """Each class of `SessionEvent` (enumerated from the union) is posted somewhere, as a
    message carrying it that does not bubble; no two classes share a message class."""
    regions = {name: Inbox() for name in typing.get_args(Region)}
    dispatcher = EventDispatcher(regions)  # type: ignore[arg-type]
    message_of: dict[type, type[Message]] = {}
    for event in sample_events():
        before = {name: len(inbox.posted) for name, inbox in regions.items()}
        dispatcher.dispatch(event)
        posted = [
            (name, message)
            for name, inbox in regions.items()
            for message in inbox.posted[before[name] :]
        ]
        assert posted, f"{type(event).__name__} reached no region"
        names = [name for name, _ in posted]
        assert len(set(names)) == len(names), f"{type(event).__name__} posted twice to a region"
        for _, message in posted:
            if isinstance(message, EventMessage):
                assert message.event is event and not message.bubble
            if not isinstance(message, RequestResumed):
                message_of.setdefault(type(event), type(message))
    assert set(message_of) == event_classes()
    assert len(set(message_of.values())) == len(message_of), "two events share a message"


async def test_a_compaction_reaches_the_summarization_panel_as_its_message(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    long_answer = " ".join(
        f"Step {n}: checked module {n} and its tests carefully." for n in range(40)
    )
    for _ in range(4):
        llm_server.enqueue(Text(long_answer, chunk_size=200))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    handled: list[tuple[MessagePump | None, Message]] = []

    def hook(message: Message) -> None:  # called by the pump that handles `message`
        handled.append((active_message_pump.get(None), message))

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        for number in range(4):
            await submit(pilot, f"task {number}")
            await wait_idle(pilot)
        llm_server.responder = lambda request: Text("Compacted: four tasks, modules checked.")
        before = len(handled)
        await submit(pilot, "/compact keep the module numbers")
        ended = lambda: any(isinstance(m, TurnEnded) for _, m in handled[before:])  # noqa: E731
        await wait_until(pilot, ended, "the compaction to end")
        await wait_idle(pilot)
        panel = app.status.summarization
        at_panel = [
            m.event
            for pump, m in handled[before:]
            if pump is panel and isinstance(m, SummarizationCompletedShown)
        ]
        assert len(at_panel) == 1 and isinstance(at_panel[0], SummarizationCompleted)
        assert isinstance(panel, SummarizationPanel) and panel.state == "done"
        # The same event reached the chat and the status pane as their own copies; none of
        # them went on to the app.
        regions = {
            pump for pump, m in handled[before:] if isinstance(m, SummarizationCompletedShown)
        }
        assert regions == {panel, app.chat, app.status}


class Inbox(MessagePump):
    """A region that keeps what it is posted (a real message pump, never started)."""

    def __init__(self) -> None:
        super().__init__()
        self.posted: list[Message] = []

    def post_message(self, message: Message) -> bool:
        self.posted.append(message)
        return True


def test_a_retry_is_the_summarizers_only_for_the_model_of_a_run_under_way() -> None:
    from forge.agent.events import SummarizationStarted, Trigger
    from forge.llm.stream import RetryScheduled
    from forge.tui.event_dispatch import EventDispatcher
    from forge.tui.retry_notices import RetryScheduledShown

    regions = {
        name: Inbox() for name in ("app", "chat", "status", "summarization", "plan", "header")
    }
    dispatcher = EventDispatcher(regions)  # type: ignore[arg-type]

    def retry(model: str) -> RetryScheduled:
        return RetryScheduled(1, 2, 1.0, "server_error", "boom", 500, model)

    def whose(model: str) -> str:
        dispatcher.dispatch(retry(model))
        notice = regions["app"].posted[-1]
        assert isinstance(notice, RetryScheduledShown)
        return notice.who()

    assert whose("agent-model") == "Model `agent-model`"
    dispatcher.dispatch(
        SummarizationStarted("run-1", "threshold", Trigger.MANUAL, "beta-model", 9_000, 10_000, 3)
    )
    assert whose("beta-model") == "Summarizer (`beta-model`)"
    assert whose("agent-model") == "Model `agent-model`", "another model's retry is the agent's"
    dispatcher.dispatch(
        SummarizationCompleted("run-1", "threshold", "beta-model", 3, 9_000, 4_000, 1.0, 1)
    )
    assert whose("beta-model") == "Model `beta-model`", "the run is over"
