"""Referenced outputs: which earlier tool outputs each assistant message draws on.

The heuristic, the same for every policy: a **reference** is a token the assistant message
mentions (in its text or its tool calls' arguments) that is an identifier of 6+ characters
(`[A-Za-z_][A-Za-z0-9_]{5,}`), a number of 2+ digits, or a path (a run of word characters,
dots and dashes holding a `/`), and that occurs (as a substring) in an earlier tool output
(tool result or observation) but in no earlier message of another kind (system prompt, user
message, assistant message or call). The **referenced output** of such a token is the newest
earlier tool output holding it. Each (assistant message, referenced output) pair counts once;
it is **lost** when that output was not verbatim in the request that produced the assistant
message. Each (assistant message, token) pair is also checked for the token anywhere in that
request (**missing** when it is nowhere in it).

These depend only on the session, so they are computed once per session (`references`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bench.sessions import Session
from forge.llm.messages import Message

TOKEN = re.compile(
    r"(?:[\w.\-]*/[\w.\-/]*[\w\-])"  # a path: holds a slash
    r"|(?<![\w.])[A-Za-z_][A-Za-z0-9_]{5,}"  # an identifier of 6+ characters
    r"|(?<![\w.])\d{2,}(?![\w])"  # a number of 2+ digits
)


def mentions(message: Message) -> list[str]:
    """The distinct candidate tokens of a message (text and call arguments), in order."""
    text = "\n".join([message.content, *(call.arguments for call in message.tool_calls)])
    found = dict.fromkeys(match.group(0) for match in TOKEN.finditer(text))
    return [token for token in found if len(token) >= 2 and token.strip("/.-")]


def _text(message: Message) -> str:
    return "\n".join(
        [message.content, *(f"{call.name} {call.arguments}" for call in message.tool_calls)]
    )


@dataclass
class Reference:
    """What one assistant message (at `index`) draws on from earlier tool outputs."""

    index: int
    outputs: list[int] = field(default_factory=list)
    """Indices of the referenced outputs (each once)."""
    tokens: list[str] = field(default_factory=list)


def references(session: Session) -> dict[int, Reference]:
    """Per assistant message index (that has any), its references."""
    messages = session.messages
    result: dict[int, Reference] = {}
    outputs: list[int] = []
    others: list[str] = []
    for index, message in enumerate(messages):
        if session.is_tool_output(index):
            outputs.append(index)
            continue
        if message.role == "assistant" and outputs:
            reference = Reference(index)
            for token in mentions(message):
                if any(token in text for text in others):
                    continue
                source = next((j for j in reversed(outputs) if token in messages[j].content), None)
                if source is None:
                    continue
                reference.tokens.append(token)
                if source not in reference.outputs:
                    reference.outputs.append(source)
            if reference.tokens:
                result[index] = reference
        others.append(_text(message))
    return result
