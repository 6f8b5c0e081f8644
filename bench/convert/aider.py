"""Aider chat transcripts (`.aider.chat.history.md`) to `*.messages.json`.

A transcript holds sessions, each opened by `# aider chat started at ...`. Inside one, lines
starting `####` are what the user typed (one user message per run of such lines), lines starting
`>` are Aider's own output (edits applied, commits, command output, lint results: one user-role
observation per run, marked `"kind": "observation"`; the banner before the first user message is
dropped), and everything else is the model's reply (one assistant message per run). Aider sends
no tool calls; its edits are in the replies' text. Trailing markdown line-break spaces are
removed.

`python -m bench.convert.aider SOURCE.md OUT.messages.json --session N` (N counted from 1 in
order of `# aider chat started` headings); `--list` prints each session's number, user
messages, replies, characters and longest user message instead.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from bench.convert import Record, write

START = re.compile(r"^# aider chat started at .*$", re.MULTILINE)


def sessions(text: str) -> list[str]:
    """The transcript's sessions, in order (text before the first heading dropped)."""
    starts = [match.end() for match in START.finditer(text)]
    ends = [*(match.start() for match in START.finditer(text)), len(text)][1:]
    return [text[start:end] for start, end in zip(starts, ends, strict=True)]


def _kind(line: str) -> str:
    if line.startswith("####"):
        return "user"
    if line.startswith(">"):
        return "output"
    return "assistant" if line.strip() else "blank"


def _strip(line: str, kind: str) -> str:
    line = line.rstrip()
    if kind == "user":
        return line[5:] if line.startswith("#### ") else line[4:]
    if kind == "output":
        return line[2:] if line.startswith("> ") else line[1:]
    return line


def convert(session: str) -> list[Record]:
    """The messages of one session."""
    blocks: list[tuple[str, list[str]]] = []
    for line in session.splitlines():
        kind = _kind(line)
        if kind == "blank":
            if blocks:
                blocks[-1][1].append("")
            continue
        if not blocks or blocks[-1][0] != kind:
            blocks.append((kind, []))
        blocks[-1][1].append(_strip(line, kind))
    records: list[Record] = []
    for kind, lines in blocks:
        content = "\n".join(lines).strip("\n")
        if not content.strip():
            continue
        if kind == "user":
            records.append({"role": "user", "content": content, "kind": "instruction"})
        elif kind == "assistant":
            records.append({"role": "assistant", "content": content})
        elif records:  # Aider's output; the start-up banner (before any message) is dropped
            records.append({"role": "user", "content": content, "kind": "observation"})
    return records


def main() -> None:
    """Command line: source, destination, session number (or --list)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("destination", type=Path, nargs="?")
    parser.add_argument("--session", type=int, help="the session to convert (from 1)")
    parser.add_argument("--list", action="store_true", help="list the sessions")
    args = parser.parse_args()
    found = sessions(args.source.read_text(encoding="utf-8"))
    if args.list:
        for number, session in enumerate(found, 1):
            records = convert(session)
            users = [r for r in records if r.get("kind") == "instruction"]
            replies = [r for r in records if r["role"] == "assistant"]
            longest = max((len(r["content"]) for r in users), default=0)
            print(
                number, len(users), len(replies), sum(len(r["content"]) for r in records), longest
            )
        return
    if args.session is None or args.destination is None:
        parser.error("give a destination and --session N (or --list)")
    write(convert(found[args.session - 1]), args.destination)


if __name__ == "__main__":
    main()
