"""The one dispatcher (docs/adr/0016): every core event has a route, and each reaches the
widget that shows it as its own typed message, handled there."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
from textual.message import Message
from textual.message_pump import MessagePump, active_message_pump

from forge.agent.events import AgentEvent, SummarizationCompleted
from forge.tui.event_dispatch import ROUTES
from forge.tui.messages import EventMessage, SummarizationSucceeded, TurnEnded
from forge.tui.widgets.summarization_panel import SummarizationPanel
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until

SIZE = (120, 40)


def test_every_event_of_the_core_has_a_route() -> None:
    events = set(typing.get_args(AgentEvent))
    assert events, "AgentEvent is a union of event classes"
    assert events <= set(ROUTES), f"no route for {sorted(c.__name__ for c in events - set(ROUTES))}"


def test_each_region_gets_its_own_message_that_does_not_bubble() -> None:
    for message_class, regions in ROUTES.values():
        assert regions and len(set(regions)) == len(regions)
        if issubclass(message_class, EventMessage):
            assert not message_class.bubble, f"{message_class.__name__} would reach the app twice"


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
            if pump is panel and isinstance(m, SummarizationSucceeded)
        ]
        assert len(at_panel) == 1 and isinstance(at_panel[0], SummarizationCompleted)
        assert isinstance(panel, SummarizationPanel) and panel.state == "done"
        # The same event reached the chat and the status pane as their own copies; none of
        # them went on to the app.
        regions = {pump for pump, m in handled[before:] if isinstance(m, SummarizationSucceeded)}
        assert regions == {panel, app.chat, app.status}
