"""Lossless recall: how a shrunk output names the original the `recall` tool gives back.

Every placeholder (masked or pruned output) and every tool-call summary names the original
message it stands for by a *recall key*: the first `RECALL_KEY_LENGTH` characters of the
original's message id. A summary (threshold, goal batch, tool call) and the fallback's marker
carry the keys of every output they folded (`folded_recall_ids`, kept whole in
`meta["recall_keys"]` so a summary of summaries keeps them all), so nothing removed is lost for
good (docs/adr/0050). The session file keeps every message as first appended, so the agent's
`recall` tool (`forge.agent.tools.recall`) returns the exact original from it — after
`--continue` too. See docs/adr/0038-context-engine-v3.md.

Core code: no UI, no I/O. The tool and the archive that reads the session file live in
`forge.agent`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from forge.llm.messages import Message, MessageKind

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


RECALL_KEYS_META = "recall_keys"
"""The meta key of a summary or marker listing the full ids of the outputs it folded."""


def is_output(message: Message) -> bool:
    """A tool result or an observation (a user-role output)."""
    return message.role == "tool" or message.kind is MessageKind.OBSERVATION


def folded_recall_ids(messages: Iterable[Message]) -> list[str]:
    """The full ids of the original outputs `messages` hold or stand for, in order, each once:
    every output's own original (a placeholder's `meta["recall"]`), and the ids an earlier
    summary or marker among them folded."""
    ids: list[str] = []
    seen: set[str] = set()

    def add(message_id: str) -> None:
        if message_id and message_id not in seen:
            seen.add(message_id)
            ids.append(message_id)

    for message in messages:
        folded = message.meta.get(RECALL_KEYS_META)
        if isinstance(folded, list):
            for item in folded:
                if isinstance(item, str):
                    add(item)
        if is_output(message):
            recorded = message.meta.get("recall")
            add(recorded if isinstance(recorded, str) else original_id(message))
    return ids


MAX_LISTED_KEYS = 48
"""Keys one summary prints at most (about 150 tokens): the newest; the older stay in its meta
and are found by `recall` with a query (`forge.context.recall_search`)."""


def recall_keys_line(ids: Sequence[str]) -> str:
    """The compact line a summary ends with, naming the outputs it folded as placeholders do:
    "(recall 3f9a2c 0b1d2e)", the newest `MAX_LISTED_KEYS` of them ("" when it folded none)."""
    if not ids:
        return ""
    listed = ids[-MAX_LISTED_KEYS:]
    keys = " ".join(message_id[:RECALL_KEY_LENGTH] for message_id in listed)
    older = len(ids) - len(listed)
    more = f"; {older} older: recall a query" if older else ""
    return f"({RECALL_TOOL} {keys}{more})"
