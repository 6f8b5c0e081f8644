"""What the summarization model is asked. Summaries are the agent's first-person working memory.

Each request is a system message (the role, the rules of working memory) and one user message
holding the task line, optional user instructions, the prior summary for continuity and the
material. The first line of every task names its kind (`MAP_TASK`, `COLLAPSE_TASK`, ...), so a
log or a scripted test server can tell requests apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from forge.llm.messages import Message, system, user


class ContentType(StrEnum):
    """What is being summarized; each type gets its own guidance."""

    CONVERSATION = "conversation"
    """A stretch of the agent's conversation: user requests, my reasoning, tool calls, results."""
    TOOL_OUTPUT = "tool_output"
    """One tool call (or a few in parallel) and what it returned."""
    DOCUMENT = "document"
    """A file or any other long text."""
    USER_GOALS = "user_goals"
    """The work of several finished user turns (their requests stay verbatim)."""
    USER_INSTRUCTIONS = "user_instructions"
    """The user's own messages, condensed only when they alone outgrow their share."""


SUMMARIZER_SYSTEM_PROMPT = """\
You write the working memory of a coding agent, in the first person ("I read...", "I ran...", \
"The user wants..."). The agent will continue its work from your text alone, so keep what it \
needs and drop what it does not.

Always keep, exactly as written: file paths, function/class/symbol names, commands and their \
exit codes, error messages, versions, numbers, URLs. Keep decisions and why they were made, \
dead ends (what was tried and failed, so it is not tried again), the user's instructions and \
corrections, and open items still to do. Drop pleasantries, repetition and raw output that \
was only looked at in passing. A work ledger kept apart already lists every file read or \
changed (with line counts) and every command with its exit code and test result: do not list \
those again; say instead why things were done, what was learned and what it means. Never \
invent anything that is not in the material. Answer with the memory text only: no preamble, no \
closing remarks."""

_GUIDANCE: dict[ContentType, str] = {
    ContentType.CONVERSATION: (
        "This is part of my conversation with the user: their requests, my reasoning, the tools "
        "I called and what they returned. Say what the user asked, what I did and found, what "
        "changed, what failed, and what remains open."
    ),
    ContentType.TOOL_OUTPUT: (
        "This is a tool call I made and its result. Say what I called and why (if stated), the "
        "facts the result established (paths, symbols, line numbers, errors, exit codes), and "
        "anything surprising. Quote short decisive lines exactly."
    ),
    ContentType.DOCUMENT: (
        "This is a document I looked at. Keep its structure, the facts and names it defines, "
        "and anything relevant to my task."
    ),
    ContentType.USER_GOALS: (
        "These are earlier requests the user made (they stay word for word in the conversation) "
        "and the work I did on them. For each request say the user's intent, what was "
        "delivered, what changed (paths, symbols), the decisions taken, every correction the "
        "user made and every "
        "lasting constraint or preference (style, tools, files not to touch). Drop the details "
        "of how the work was done."
    ),
    ContentType.USER_INSTRUCTIONS: (
        "These are messages the user wrote to me. Condense them, keeping EVERY instruction, "
        "requirement, correction, constraint and preference, with every path, name, number and "
        "quoted text exactly as written. Drop only pleasantries, repetition and pasted material "
        "that is not an instruction (say in one line what was pasted)."
    ),
}

BRIEF_TASK = "Task: write a brief working-memory note of the material below."
SINGLE_TASK = "Task: write the working-memory summary of the material below."
MAP_TASK = "Task: summarize part {index} of {total} of a longer text."
COLLAPSE_TASK = "Task: combine these partial summaries (round {depth}) into one shorter summary."
SYNTHESIS_TASK = "Task: write the final working-memory summary from these partial summaries."


def _request(
    task: str,
    content_type: ContentType,
    material: str,
    *,
    target_tokens: int,
    prior_summary: str = "",
    instructions: str = "",
) -> list[Message]:
    parts = [task, _GUIDANCE[content_type], f"Length: at most about {target_tokens} tokens."]
    if instructions.strip():
        parts.append(f"The user's instructions for this summary:\n{instructions.strip()}")
    if prior_summary.strip():
        parts.append(
            "My earlier summary, for continuity (do not repeat it; build on it):\n"
            f"<prior_summary>\n{prior_summary.strip()}\n</prior_summary>"
        )
    parts.append(f"<material>\n{material}\n</material>")
    return [system(SUMMARIZER_SYSTEM_PROMPT), user("\n\n".join(parts))]


def brief_request(
    material: str,
    content_type: ContentType,
    *,
    target_tokens: int,
    prior_summary: str = "",
    instructions: str = "",
) -> list[Message]:
    """One short note of a small piece of material."""
    return _request(
        BRIEF_TASK,
        content_type,
        material,
        target_tokens=target_tokens,
        prior_summary=prior_summary,
        instructions=instructions,
    )


def single_request(
    material: str,
    content_type: ContentType,
    *,
    target_tokens: int,
    prior_summary: str = "",
    instructions: str = "",
) -> list[Message]:
    """One summary of material that fits a single call."""
    return _request(
        SINGLE_TASK,
        content_type,
        material,
        target_tokens=target_tokens,
        prior_summary=prior_summary,
        instructions=instructions,
    )


def map_request(
    chunk: str, index: int, total: int, content_type: ContentType, *, target_tokens: int
) -> list[Message]:
    """The summary of one chunk of a long text (the map step)."""
    task = MAP_TASK.format(index=index, total=total)
    return _request(task, content_type, chunk, target_tokens=target_tokens)


def collapse_request(
    summaries: Sequence[str], depth: int, content_type: ContentType, *, target_tokens: int
) -> list[Message]:
    """Several partial summaries combined into one (a collapse step)."""
    material = _numbered(summaries)
    task = COLLAPSE_TASK.format(depth=depth)
    return _request(task, content_type, material, target_tokens=target_tokens)


def synthesis_request(
    summaries: Sequence[str],
    content_type: ContentType,
    *,
    target_tokens: int,
    prior_summary: str = "",
    instructions: str = "",
) -> list[Message]:
    """The final summary from the partial summaries (the reduce step)."""
    return _request(
        SYNTHESIS_TASK,
        content_type,
        _numbered(summaries),
        target_tokens=target_tokens,
        prior_summary=prior_summary,
        instructions=instructions,
    )


def _numbered(summaries: Sequence[str]) -> str:
    return "\n\n".join(
        f"<part index={number}>\n{text.strip()}\n</part>"
        for number, text in enumerate(summaries, start=1)
    )
