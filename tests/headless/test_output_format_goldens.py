"""The same full turn as `test_jsonl_golden` (streamed text and reasoning, a tool call that
works and one that fails, a compaction, usage, the ending) in the three formats other tools
read: stream-json (Claude Code's shapes, with `--include-partial-messages`), json (its
`result` alone) and codex-json (`codex exec --json`'s events), each compared with its golden
file. Volatile values are normalised as there, plus `uuid` and `duration_api_ms`.

To regenerate after an intended change: `UPDATE_GOLDEN=1 pytest
tests/headless/test_output_format_goldens.py`, and say why in ADR 0015.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.headless.test_headless import forge_run
from tests.headless.test_jsonl_golden import VOLATILE, normalise, script
from tests.support.openai_server import OpenAIServer, RecordedRequest, Reply, Text

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"

FORMATS = {
    "stream-json": ("claude_stream_turn.jsonl", ("--include-partial-messages",)),
    "json": ("claude_result_turn.json", ()),
    "codex-json": ("codex_json_turn.jsonl", ()),
}
"""Format → golden file and the extra flags of its run."""


def _volatile(record: Any) -> Any:
    if isinstance(record, dict):
        return {
            key: "<uuid>"
            if key == "uuid"
            else "<ms>"
            if key == "duration_api_ms"
            else _volatile(value)
            for key, value in record.items()
        }
    if isinstance(record, list):
        return [_volatile(item) for item in record]
    return record


def run_turn(
    server: OpenAIServer, workspace: Path, output_format: str, *flags: str
) -> list[dict[str, Any]]:
    """The scripted turn's stdout, one normalised object per line."""
    (workspace / "in.txt").write_text("hello\n")
    replies = script()

    def respond(request: RecordedRequest) -> Reply:
        if not request.tools:  # a summarization request
            return Text("Summary: read in.txt; missing.txt is absent.", prompt_tokens=300)
        return replies.pop(0)

    server.responder = respond
    result = forge_run(
        server, workspace, "--output-format", output_format, *flags, "--yes", "read in.txt"
    )
    assert result.returncode == 0, result.stderr
    home = os.environ.get("XDG_DATA_HOME", str(workspace))
    return [
        _volatile(normalise(json.loads(line), str(workspace), home))
        for line in result.stdout.splitlines()
    ]


@pytest.mark.parametrize("output_format", sorted(FORMATS))
def test_a_full_turn_writes_the_golden_messages(
    llm_server: OpenAIServer, workspace: Path, output_format: str
) -> None:
    name, flags = FORMATS[output_format]
    records = run_turn(llm_server, workspace, output_format, *flags)
    lines = [json.dumps(record, ensure_ascii=False) for record in records]
    golden = GOLDEN_DIR / name
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert lines == golden.read_text(encoding="utf-8").splitlines()
    assert "uuid" not in VOLATILE  # normalised here, never in forge-jsonl's golden
