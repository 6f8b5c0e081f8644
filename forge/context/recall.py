"""Lossless recall: how a shrunk output names the original the `recall` tool gives back.

Every placeholder (masked or pruned output) and every tool-call summary names the original
message it stands for by a *recall key*: the first `RECALL_KEY_LENGTH` characters of the
original's message id. The session file keeps every message as first appended, so the agent's
`recall` tool (`forge.agent.tools.recall`) returns the exact original from it — after
`--continue` too. See docs/adr/0038-context-engine-v3.md.

Core code: no UI, no I/O. The tool and the archive that reads the session file live in
`forge.agent`.
"""

from __future__ import annotations

from forge.llm.messages import Message

RECALL_TOOL = "recall"
"""The name of the tool that returns an original output."""
RECALL_KEY_LENGTH = 6
"""Characters of a message id a placeholder shows: short (about three tokens) and, with 16
random hex characters per id, unique in any realistic session (the tool asks for more of the
id on a clash)."""


def original_id(message: Message) -> str:
    """The id of the output `message` stands for: an output cut by the ingest cap (a copy with
    a new id) stands for the uncut original it replaced; any other message for itself."""
    if message.meta.get("capped") and message.replaces:
        return message.replaces[0]
    return message.id


def recall_key(message: Message) -> str:
    """The short key naming `message`'s original, as placeholders print it."""
    return original_id(message)[:RECALL_KEY_LENGTH]


def recall_hint(message: Message) -> str:
    """The words a placeholder ends with, e.g. `recall 3f9a2c`."""
    return f"{RECALL_TOOL} {recall_key(message)}"
