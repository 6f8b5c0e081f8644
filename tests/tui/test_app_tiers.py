"""The deterministic context tiers in the real app: masking keeps the chat calm (no summary
block every few tool calls), a cut long output is told in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.message import Message

from forge.agent.events import SummarizationCompleted
from forge.llm.messages import MessageKind
from forge.tui.widgets.chat_blocks import SummaryBlock
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_compaction import write_data_files
from tests.tui.test_app_helpers import (
    configure,
    events_of,
    make_app,
    notices,
    submit,
    wait_idle,
)

SIZE = (120, 40)

UNPRICED = "local-coder"
"""A model the price table does not list: masking acts as soon as a batch is ready (with cache
prices it waits, below the threshold, until removing pays: docs/adr/0050 §3)."""


async def test_masking_and_the_ingest_cap_run_without_summary_blocks(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    write_data_files(workspace, count=5)
    (workspace / "big.txt").write_text(
        "".join(f"line {n}: " + "x " * 30 + "\n" for n in range(900))
    )
    reads = [ToolCalls([Call("read_file", {"path": f"data{n}.txt"})]) for n in range(1, 6)]
    big = ToolCalls([Call("read_file", {"path": "big.txt"})])
    llm_server.enqueue(*reads, big, Text("Read them all."))
    config = {
        "llm": {"model": UNPRICED},
        "context": {"max_tokens": 40_000, "mask_keep_recent": 3, "mask_batch": 2},
    }
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "read the data files")
        await wait_idle(pilot)
        completed = {e.strategy for e in events_of(seen, SummarizationCompleted)}
        assert {"masking", "ingest_cap"} <= completed, completed
        messages = app.session.agent.conversation.messages
        assert any(m.kind is MessageKind.PRUNED for m in messages), "outputs were masked"
        assert not app.chat.query(SummaryBlock), "no summary block for masking or the cap"
        assert any("cut to its head and tail" in text for text in notices(app))


async def test_the_model_recalls_a_masked_output_in_the_app_without_approval(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    import re

    from forge.agent.events import ApprovalRequested

    write_data_files(workspace, count=6)
    reads = [ToolCalls([Call("read_file", {"path": f"data{n}.txt"})]) for n in range(1, 7)]
    llm_server.enqueue(*reads)
    recalled: list[str] = []

    def respond(request: object) -> Text | ToolCalls:
        for message in request.messages:  # type: ignore[attr-defined]
            found = re.search(r"; recall ([0-9a-f]{6})\]", str(message.get("content")))
            if found and not recalled:
                recalled.append(found.group(1))
                return ToolCalls([Call("recall", {"id": found.group(1)})])
        return Text("Recalled it.")

    llm_server.responder = respond
    config = {"llm": {"model": UNPRICED}, "context": {"mask_keep_recent": 3, "mask_batch": 3}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    seen: list[Message] = []
    try:
        async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
            await submit(pilot, "read the data files")
            await wait_idle(pilot)
            assert recalled, "masking did not fire"
            assert not events_of(seen, ApprovalRequested)  # read-only: no approval
            messages = app.session.agent.conversation.messages
    finally:
        llm_server.responder = None
    first_read = next(m for m in llm_server.requests[1].messages if m["role"] == "tool")
    answer = [m for m in messages if m.role == "tool" and m.name == "recall"][-1]
    assert answer.content == first_read["content"]  # word for word, from the session file
    assert "record 1-79" in answer.content
