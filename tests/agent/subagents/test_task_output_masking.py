"""A `task` output is protected from masking while it is among the newest outputs, and masked
like any other output once older (the engine's `mask_keep_recent` rule; docs/adr/0045)."""

from __future__ import annotations

import json

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.strategies.masking import ObservationMaskingStrategy
from forge.llm.messages import ToolCall, assistant, system, tool_result, user
from forge.llm.tokenizer import TiktokenCounter

REPORT = "The config loader lives in forge/config/store.py; " * 80


def conversation_with(task_position: int, outputs: int = 4) -> Conversation:
    """`outputs` tool results, the `task` one at `task_position` (0 = oldest)."""
    messages = [system("s"), user("u")]
    for index in range(outputs):
        name = "task" if index == task_position else "read_file"
        arguments = {"agent": "explore", "prompt": "find it"} if name == "task" else {"path": "a"}
        call = ToolCall(f"c{index}", name, json.dumps(arguments))
        messages += [assistant("", (call,)), tool_result(call, REPORT)]
    return Conversation(messages)


def task_output_masked(conversation: Conversation) -> bool:
    (output,) = [m for m in conversation.messages if m.role == "tool" and m.name == "task"]
    return output.content != REPORT


def test_a_task_output_among_the_newest_is_not_masked_and_an_older_one_is() -> None:
    settings = ContextSettings(mask_keep_recent=3)
    counter = TiktokenCounter("gpt-4o")
    newest = conversation_with(task_position=3)
    ObservationMaskingStrategy(settings, counter).apply(newest, 100_000, force=True)
    assert not task_output_masked(newest)
    oldest = conversation_with(task_position=0)
    ObservationMaskingStrategy(settings, counter).apply(oldest, 100_000, force=True)
    assert task_output_masked(oldest)
