"""mini-swe-agent `.traj.json` files to `*.messages.json`.

mini-swe-agent's file holds the very messages it sent (a list, or `{"messages": [...]}` from
version 1.1 on): system, the task as the first user message, then the model's replies
(assistant, one bash block each) and the command output as user messages (observations).

`python -m bench.convert.mini_swe_agent SOURCE.traj.json OUT.messages.json`
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.convert import Record, text_of, write


def convert(data: Any) -> list[Record]:
    """The messages of one trajectory."""
    messages = data["messages"] if isinstance(data, dict) else data
    records: list[Record] = []
    seen_assistant = False
    for message in messages:
        role = message["role"]
        record: Record = {"role": role, "content": text_of(message.get("content"))}
        if role == "assistant":
            seen_assistant = True
        elif role == "user":
            record["kind"] = "observation" if seen_assistant else "instruction"
        records.append(record)
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
