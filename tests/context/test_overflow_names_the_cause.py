"""An overflow that nothing can shrink says what fills the request, tool definitions
included (issue 20, docs/adr/0036); before, it always blamed the instructions."""

from __future__ import annotations

import pytest

from forge.config.settings import ContextSettings
from forge.context.errors import SummarizationSkipped
from forge.context.events import Trigger
from forge.context.request_breakdown import request_breakdown
from forge.llm.messages import system, user
from forge.llm.protocols import ToolSpec
from forge.llm.tokenizer import CharEstimateCounter
from tests.context.builders import conversation, make_manager, provider_for, task_start
from tests.support.openai_server import OpenAIServer


def spec(name: str, size: int) -> ToolSpec:
    properties = {f"p{n}": {"type": "string", "description": "d" * 90} for n in range(size // 100)}
    return ToolSpec(name, "A tool.", {"type": "object", "properties": properties})


def test_the_breakdown_names_the_largest_parts_first() -> None:
    counter = CharEstimateCounter(4)
    tools = [spec("docs__search", 40_000), spec("read_file", 400), spec("docs__fetch", 2_000)]
    text = request_breakdown([system("You are Forge."), user("hello")], tools, counter)
    assert text == (
        "tool definitions 14,031 tokens (3; largest: docs__search 13,206, docs__fetch 686, "
        "read_file 163), the system prompt 7 tokens, messages 5 tokens (1)"
    )


async def test_an_overflow_filled_by_tool_definitions_names_them(
    llm_server: OpenAIServer,
) -> None:
    chat = conversation(task_start("a short request"))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, ContextSettings(max_tokens=8000))
        manager.set_tools([spec("docs__search", 60_000), spec("read_file", 300)])
        with pytest.raises(SummarizationSkipped) as raised:
            await manager.compact(chat, trigger=Trigger.OVERFLOW)
    message = str(raised.value)
    assert "against a budget of 8,000" in message
    assert "tool definitions" in message and "largest: docs__search" in message
    assert "excluded tools' messages" not in message
    assert llm_server.requests == []
