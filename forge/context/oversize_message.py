"""A user message larger than its share of the window, sent as its head and tail (issue 34).

The README promises both "never a prompt above its budget" and "your messages word for word".
A single message larger than the window cannot keep both: it is kept whole in the session file
(the conversation appends it as it was written) and replaced in the conversation by its first
and last parts around a marker that names its recall key, so the model knows what it is missing
and can page through the whole with `recall` (offset, length). What fits is the message's
share: `context.user_instruction_share` of the budget (the same share the instruction strategy
keeps the user's messages to). Counting a 50 MB message with the tokenizer would take seconds,
so the character count decides first when it can: no tokenizer gives fewer than one token per
two characters of ordinary text, nor more than one per character.
"""

from __future__ import annotations

from dataclasses import dataclass

from forge.llm.messages import Message, new_message_id
from forge.llm.protocols import TokenCounter

KEPT_SHARE = 0.9
"""Of the message's share, what the head, tail and marker may take (room for framing)."""


@dataclass(frozen=True, slots=True)
class ShortenedMessage:
    """The replacement, and what the notice says about it."""

    message: Message
    original_tokens: int | None
    """The original's tokens, when counted (None: so large the characters decided)."""
    original_characters: int
    kept_characters: int
    share_tokens: int


def marker(original: Message, characters: int, share_tokens: int, omitted: int) -> str:
    """The line between head and tail: what was left out and how to read it."""
    return (
        f"\n\n[… {omitted:,} characters of this message are left out here: it is "
        f"{characters:,} characters, more than its share of the context ({share_tokens:,} "
        f"tokens). The whole message is kept: recall {original.id} with offset and length "
        "(characters) pages through it …]\n\n"
    )


def _too_large(text: str, share_tokens: int, counter: TokenCounter) -> tuple[bool, int | None]:
    if len(text) <= share_tokens // 2:
        return False, None
    if len(text) > share_tokens * 8:
        return True, None
    tokens = counter.count_text(text)
    return tokens > share_tokens, tokens


def shortened_user_message(
    message: Message, share_tokens: int, counter: TokenCounter
) -> ShortenedMessage | None:
    """The head-and-tail replacement for `message`, or None when it fits its share."""
    text = message.content
    too_large, tokens = _too_large(text, share_tokens, counter)
    if not too_large:
        return None
    target = max(1, int(share_tokens * KEPT_SHARE))
    side = max(1, min(len(text) // 2, target))
    while True:
        omitted = len(text) - 2 * side
        content = text[:side] + marker(message, len(text), share_tokens, omitted) + text[-side:]
        if side == 1 or counter.count_text(content) <= target:
            break
        side //= 2
    replacement = Message(
        role="user",
        content=content,
        id=new_message_id(),
        kind=message.kind,
        meta={**message.meta, "shortened_from": message.id},
        images=message.images,  # the share is on the text; the images go as they are
    )
    return ShortenedMessage(replacement, tokens, len(text), 2 * side, share_tokens)
