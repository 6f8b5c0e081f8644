"""What Forge copies, and how it says so (docs/adr/0049).

Text reaches the clipboard only on the user's explicit action — Ctrl+C over a mouse selection,
or `/copy` — through OSC 52 (`App.copy_to_clipboard`), which terminals and tmux (with
`set-clipboard on`) turn into a clipboard or a paste buffer. `/copy` copies the last answer;
`/copy N` its N-th fenced code block, found with the same Markdown parser the chat renders
with, so what is copied is what is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt

from forge.llm.messages import MessageKind

if TYPE_CHECKING:
    from forge.llm.messages import Message


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """One fenced or indented code block of an answer."""

    language: str
    code: str


def last_answer(messages: Sequence[Message]) -> str | None:
    """The newest assistant message with text (not a summary), or None."""
    for message in reversed(messages):
        normal = message.role == "assistant" and message.kind is MessageKind.NORMAL
        if normal and message.content.strip():
            return message.content
    return None


def code_blocks(markdown: str) -> list[CodeBlock]:
    """The code blocks of `markdown`, in order."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    return [
        CodeBlock(token.info.strip().split(" ")[0], token.content)
        for token in tokens
        if token.type in ("fence", "code_block")
    ]


def describe_copied(text: str, what: str) -> str:
    """The notice after a copy: what, and how much ("Copied the selection: 2 lines, 40
    characters")."""
    lines = text.count("\n") + 1
    return (
        f"Copied {what}: {lines} line{'s' if lines != 1 else ''}, "
        f"{len(text)} character{'s' if len(text) != 1 else ''}"
    )


def copy_choice(messages: Sequence[Message], argument: str) -> tuple[str, str] | str:
    """For `/copy [N]`: the text to copy and what it is, or the reason nothing can be."""
    answer = last_answer(messages)
    if answer is None:
        return "Nothing to copy yet: no answer in this session."
    if not argument:
        return answer, "the last answer"
    if not argument.isdigit() or int(argument) < 1:
        return f"`/copy {argument}`: give a code block's number, e.g. `/copy 1`."
    blocks = code_blocks(answer)
    number = int(argument)
    if number > len(blocks):
        held = f"only {len(blocks)}" if blocks else "none"
        return f"The last answer has {held} code block{'s' if len(blocks) != 1 else ''}."
    block = blocks[number - 1]
    language = f" ({block.language})" if block.language else ""
    return block.code.rstrip("\n"), f"code block {number} of {len(blocks)}{language}"
