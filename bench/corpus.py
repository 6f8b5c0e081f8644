"""The shared corpus of real agent sessions, as Forge messages, for the benchmarks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forge.llm.messages import Message, ToolCall

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
TRAJECTORY = (
    CORPUS
    / "trajectories"
    / "openhands__multi_swe_bench_examples_output__ponylang__ponyc-4593.messages.json"
)
"""The OpenHands ponyc-4593 session: 69 messages, 33 tool calls, outputs up to 13 KB."""


def load_trajectory(path: Path) -> list[Message]:
    """Messages from a corpus file: a JSON list of {role, content, tool_calls?, tool_call_id?}."""
    records: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return [
        Message(
            role=record["role"],
            content=record.get("content") or "",
            tool_calls=tuple(
                ToolCall(
                    id=call["id"],
                    name=call["function"]["name"],
                    arguments=call["function"].get("arguments") or "{}",
                )
                for call in record.get("tool_calls") or ()
            ),
            tool_call_id=record.get("tool_call_id"),
            name=record.get("name"),
        )
        for record in records
    ]
