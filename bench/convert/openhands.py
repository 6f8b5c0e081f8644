"""OpenHands event histories (evaluation `output.jsonl` lines, `tests/runtime/trajs/*.json`)
to `*.messages.json`.

Events become messages as the CodeAct agent's own message list has them: the `system` action is
the system prompt; a user `message` action is a user message; an agent action carrying
`tool_call_metadata` becomes one assistant message per model response (its text and all its
tool calls, taken from the recorded response); an observation carrying `tool_call_metadata` is
that call's tool result; an agent `message` action without a call is a plain assistant message;
the workspace-context `recall` observation and `error` observations are user-role observations
(the agent saw them as user messages). State changes and other bookkeeping events are dropped.

`python -m bench.convert.openhands SOURCE OUT.messages.json [--line N]` (`--line` picks one
line of a `.jsonl` file, counted from 1; a `.json` file holds one event list).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.convert import Record, text_of, tool_call, write


def _response_message(metadata: dict[str, Any]) -> dict[str, Any]:
    choices = (metadata.get("model_response") or {}).get("choices") or [{}]
    message: dict[str, Any] = choices[0].get("message") or {}
    return message


def convert(events: list[dict[str, Any]]) -> list[Record]:
    """The messages of one event history."""
    records: list[Record] = []
    responses: set[str] = set()
    answered: set[str] = set()
    for event in events:
        action, observation = event.get("action"), event.get("observation")
        metadata = event.get("tool_call_metadata")
        args = event.get("args") or {}
        if action == "system":
            records.append({"role": "system", "content": args.get("content") or event["message"]})
        elif action == "message" and event.get("source") == "user":
            content = args.get("content") or event.get("message") or ""
            records.append({"role": "user", "content": content, "kind": "instruction"})
        elif action and metadata:
            response_id = (metadata.get("model_response") or {}).get("id") or metadata[
                "tool_call_id"
            ]
            if response_id in responses:
                continue
            responses.add(response_id)
            message = _response_message(metadata)
            calls = [
                tool_call(c["id"], c["function"]["name"], c["function"].get("arguments") or "{}")
                for c in message.get("tool_calls") or []
            ]
            if not calls:
                calls = [tool_call(metadata["tool_call_id"], metadata["function_name"], "{}")]
            records.append(
                {
                    "role": "assistant",
                    "content": text_of(message.get("content")),
                    "tool_calls": calls,
                }
            )
        elif action == "message" and event.get("source") == "agent":
            records.append(
                {"role": "assistant", "content": args.get("content") or event["message"]}
            )
        elif observation and metadata:
            call_id = metadata["tool_call_id"]
            if call_id in answered:
                continue
            answered.add(call_id)
            records.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "name": metadata.get("function_name"),
                    "content": text_of(event.get("content")),
                }
            )
        elif observation in ("recall", "error") and (event.get("content") or event.get("message")):
            content = text_of(event.get("content")) or event.get("message") or ""
            records.append({"role": "user", "content": content, "kind": "observation"})
    return _answer_every_call(records)


def _answer_every_call(records: list[Record]) -> list[Record]:
    """Drop tool calls no result answers (an interrupted final action) unless they end the list;
    the replay closes a final unanswered call itself."""
    answered = {r["tool_call_id"] for r in records if r["role"] == "tool"}
    result = []
    for index, record in enumerate(records):
        calls = record.get("tool_calls")
        if calls and index < len(records) - 1:
            kept = [c for c in calls if c["id"] in answered]
            record = (
                {**record, "tool_calls": kept}
                if kept
                else {k: v for k, v in record.items() if k != "tool_calls"}
            )
            if not kept and not record["content"]:
                continue
        result.append(record)
    return result


def main() -> None:
    """Command line: source file, destination file, optional line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("destination", type=Path)
    parser.add_argument("--line", type=int, help="the line of a .jsonl file (from 1)")
    args = parser.parse_args()
    text = args.source.read_text(encoding="utf-8")
    if args.line is not None:
        events = json.loads(text.splitlines()[args.line - 1])["history"]
    else:
        events = json.loads(text)
    write(convert(events), args.destination)


if __name__ == "__main__":
    main()
