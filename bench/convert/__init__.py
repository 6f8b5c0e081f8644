"""Converters from public agent-trajectory formats to the replay's `*.messages.json` shape.

Each module reads one source format and writes a JSON list of `{role, content, tool_calls?,
tool_call_id?, name?}` (OpenAI chat messages), the shape of `../shared/corpus/trajectories/`.
A converter may add `"kind": "observation"` to a user-role message that carries a tool's output
(text-action agents, Aider's command output), or `"kind": "instruction"` to one the user typed;
`bench.sessions.load_session` reads that mark and otherwise infers the kind. Run
`python -m bench.convert.<format> SOURCE OUT.messages.json [options]`; the commands that built
`bench/corpus/` are listed in `bench/corpus/README.md`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Record = dict[str, Any]


def text_of(content: Any) -> str:
    """A message content as text: a string as is, a list of parts joined (text parts only)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return str(content)


def tool_call(call_id: str, name: str, arguments: Any) -> Record:
    """One OpenAI tool call record; arguments kept as the JSON text the model sent."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def write(records: list[Record], destination: Path) -> None:
    """Write the records as the corpus does (indented JSON, UTF-8); ValueError if empty."""
    if not records:
        raise ValueError(f"{destination}: nothing to write (no messages converted)")
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(
        json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
