"""Small synthetic sessions for the replay harness's tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forge.llm.messages import Message, ToolCall


def tool_session(
    calls: int, output_words: int = 50, *, instruction: str = "Fix the parser."
) -> list[Message]:
    """A system prompt, an instruction, then `calls` read_file calls with their outputs."""
    messages = [
        Message(role="system", content="You are a coding agent."),
        Message(role="user", content=instruction),
    ]
    for number in range(calls):
        call = ToolCall(
            id=f"call_{number}",
            name="read_file",
            arguments=json.dumps({"path": f"src/f{number}.py"}),
        )
        messages.append(
            Message(role="assistant", content=f"Reading file {number}.", tool_calls=(call,))
        )
        body = " ".join(f"line{number}_{word}." for word in range(output_words))
        messages.append(Message(role="tool", content=body, tool_call_id=call.id, name="read_file"))
    messages.append(Message(role="assistant", content="Done."))
    return messages


def write_trajectory(path: Path, messages: list[Message]) -> Path:
    """The messages as a corpus file (`{role, content, tool_calls?, tool_call_id?}` records)."""
    records: list[dict[str, Any]] = []
    for message in messages:
        record: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.tool_calls:
            record["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in message.tool_calls
            ]
        if message.tool_call_id:
            record["tool_call_id"] = message.tool_call_id
        records.append(record)
    path.write_text(json.dumps(records), encoding="utf-8")
    return path
