"""Which lost outputs a request can still bring back: recall keys present in its text.

Forge names the original of every output it shrinks by a *recall key*, the first
`forge.context.recall.RECALL_KEY_LENGTH` (6) hex characters of the original message's id
(`recall 3f9a2c` in a placeholder, a tool-call summary or an ingest-cap marker); its `recall`
tool takes that key, the full id, or any unique start of it. The replay recognises a key by
that contract only, whatever the words around it: a **key** is a run of 6 to 32 lowercase hex
characters standing alone (no letter or digit on either side) in the request text (contents
and call arguments), and it **reaches** an output when that output's id starts with it. A
summary that lists the keys of everything it folded, in any compact form that keeps each key a
word of its own (`recall 3f9a2c 9b01de`, `keys: 3f9a2c, 9b01de`), reaches all of them.

A lost referenced output (`bench.references`) is **unrecoverable** when it is neither verbatim
in the request nor reached by a key in it. Only a policy that has the `recall` tool
(`forge…`) can reach anything: for every other policy each lost output is unrecoverable.

The replay gives each session message a fresh random id when it loads the file, and Forge's
manager keeps those ids (`bench.policies.ForgePolicy`), so a key in Forge's request names the
session's own message; a random 6-hex word elsewhere in a request matches a given output's id
with odds of about 1 in 16 million.

**A re-fetch at its real tokens** (`refetch_messages`): the recall-adjusted dollars add, per
lost referenced output, the call that fetches it again and its result (a `recall` of its key
when one reaches it, else the original call made again), the call billed as output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from bench.sessions import Session
from forge.context.recall import RECALL_KEY_LENGTH, RECALL_TOOL
from forge.llm.messages import Message, ToolCall

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
KEY = re.compile(rf"(?<![0-9A-Za-z])[0-9a-f]{{{RECALL_KEY_LENGTH},32}}(?![0-9A-Za-z])")


def keys_in(text: str) -> set[str]:
    """Every word of `text` that could be a recall key."""
    return set(KEY.findall(text))


def reached(message_id: str, keys: set[str]) -> bool:
    """Whether one of `keys` names the message with this id (its start, 6+ characters)."""
    return any(
        message_id[:length] in keys for length in range(RECALL_KEY_LENGTH, len(message_id) + 1)
    )


def unrecoverable(ids: Iterable[str], text: str, has_recall: bool) -> list[str]:
    """Of the lost outputs' `ids`, those no recall key in the request `text` reaches (all of
    them for a policy without `recall`)."""
    ids = list(ids)
    if not has_recall or not ids:
        return ids
    keys = keys_in(text)
    return [message_id for message_id in ids if not reached(message_id, keys)]


def refetch_messages(session: Session, index: int, by_key: bool) -> tuple[Message, Message]:
    """The call that fetches the lost output at `index` again and its result, at their real
    size: a `recall` of its key when a key in the request reaches it (`by_key`); otherwise the
    original call made again (a structured call as it was; a text action as the action's
    fenced block), the output coming back as it came the first time."""
    output = session.messages[index]
    if by_key:
        call = ToolCall(
            id=f"refetch_{index}",
            name=RECALL_TOOL,
            arguments=json.dumps({"id": output.id[:RECALL_KEY_LENGTH]}),
        )
        return (
            Message(role="assistant", content="", tool_calls=(call,)),
            Message(role="tool", content=output.content, tool_call_id=call.id, name=RECALL_TOOL),
        )
    if output.role == "tool":
        original = next(
            (
                call
                for message in reversed(session.messages[:index])
                for call in message.tool_calls
                if call.id == output.tool_call_id
            ),
            None,
        )
        if original is not None:
            return Message(role="assistant", content="", tool_calls=(original,)), output
    before = session.messages[index - 1] if index else output
    blocks = _FENCE.findall(before.content) if before.role == "assistant" else []
    action = f"```\n{blocks[-1]}```" if blocks else before.content
    return Message(role="assistant", content=action), output
