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
    config = {"context": {"max_tokens": 40_000, "mask_keep_recent": 3, "mask_batch": 2}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "read the data files")
        await wait_idle(pilot)
        completed = {e.strategy for e in events_of(seen, SummarizationCompleted)}
        assert {"masking", "ingest_cap"} <= completed, completed
        messages = app.runtime.agent.conversation.messages
        assert any(m.kind is MessageKind.PRUNED for m in messages), "outputs were masked"
        assert not app.chat.query(SummaryBlock), "no summary block for masking or the cap"
        assert any("cut to its head and tail" in text for text in notices(app))
