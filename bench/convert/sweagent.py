"""SWE-agent `.traj` files (and EnIGMA's CTF demonstrations) to `*.messages.json`.

The `history` list is what SWE-agent sent the model: system, user (the task, and for some
configurations a demonstration as a second user message), assistant (thought + action), and the
environment's output as `user` (text actions) or `tool` (function calling, `tool_call_ids`).
Only role, content, tool calls and call ids are kept; a `tool` message answering several calls
is split into one result per call (the first carries the output); messages of another agent
(`agent` other than the main one, e.g. EnIGMA's summarizer) are dropped.

`python -m bench.convert.sweagent SOURCE.traj OUT.messages.json`
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.convert import Record, text_of, tool_call, write

MAIN_AGENTS = {"primary", "main", None}


def convert(data: dict[str, Any]) -> list[Record]:
    """The messages of one trajectory."""
    records: list[Record] = []
    seen_assistant = False
    for item in data.get("history") or []:
        if item.get("agent") not in MAIN_AGENTS:
            continue
        role = item.get("role")
        content = text_of(item.get("content"))
        if role == "assistant":
            seen_assistant = True
            record: Record = {"role": "assistant", "content": content}
            calls = [
                tool_call(c["id"], c["function"]["name"], c["function"].get("arguments") or "{}")
                for c in item.get("tool_calls") or []
            ]
            if calls:
                record["tool_calls"] = calls
            records.append(record)
        elif role == "tool":
            ids = item.get("tool_call_ids") or [item.get("tool_call_id")]
            for number, call_id in enumerate(ids):
                records.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "content": content if number == 0 else "",
                    }
                )
        elif role == "user":
            kind = "observation" if seen_assistant else "instruction"
            records.append({"role": "user", "content": content, "kind": kind})
        elif role == "system":
            records.append({"role": "system", "content": content})
    return records


def main() -> None:
    """Command line: source file, destination file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("destination", type=Path)
    args = parser.parse_args()
    write(convert(json.loads(args.source.read_text(encoding="utf-8"))), args.destination)


if __name__ == "__main__":
    main()
