"""The shared corpus of real agent sessions, as Forge messages, for the benchmarks.

The corpus lives beside the repository (`../shared/corpus/`). Benchmarks that need it call
`require_trajectories()` or `load_trajectory()`, which raise `CorpusMissingError` naming the
path when it is not there: a benchmark never skips quietly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forge.llm.messages import Message, ToolCall

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
TRAJECTORIES = CORPUS / "trajectories"
TRAJECTORY = (
    TRAJECTORIES / "openhands__multi_swe_bench_examples_output__ponylang__ponyc-4593.messages.json"
)
"""The OpenHands ponyc-4593 session: 69 messages, 33 tool calls, outputs up to 13 KB."""


class CorpusMissingError(FileNotFoundError):
    """The shared corpus (or one file of it) is not where the benchmarks expect it."""


def require_trajectories(directory: Path | None = None) -> list[Path]:
    """Every `*.messages.json` trajectory in `directory` (default `TRAJECTORIES`), sorted;
    CorpusMissingError if there are none."""
    directory = TRAJECTORIES if directory is None else directory
    files = sorted(directory.glob("*.messages.json")) if directory.is_dir() else []
    if not files:
        raise CorpusMissingError(
            f"no trajectories (*.messages.json) in {directory}: the benchmarks need the shared "
            "corpus checked out beside the repository (../shared/corpus/trajectories/)"
        )
    return files


def load_trajectory(path: Path | None = None) -> list[Message]:
    """Messages from a corpus file (default `TRAJECTORY`): a JSON list of {role, content,
    tool_calls?, tool_call_id?}; CorpusMissingError if the file does not exist."""
    path = TRAJECTORY if path is None else path
    if not path.is_file():
        raise CorpusMissingError(
            f"trajectory not found: {path} (the benchmarks need the shared corpus checked out "
            "beside the repository, ../shared/corpus/trajectories/)"
        )
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
