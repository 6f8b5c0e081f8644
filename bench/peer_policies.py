"""Other agents' context policies, as the replay runs them: `codex` (and `codex-scaled`),
`claude-code`, `openhands` (and `openhands-100`); `gemini-cli` and `opencode` are in
`bench.gemini_cli_policy` and `bench.opencode_policy`.

Each follows its source (cited in bench/README.md) where the replay can: what triggers a
compaction, what the compacted history holds, what stays verbatim. Summaries come from the
replay's summarizer like every baseline's (`Summarizer.summarize(material)`, deterministic and
offline); a policy's summary material is the part of its current request that it replaces,
previous summary included, rendered by `bench.policies.render`. Every policy keeps a request a
valid message list: a kept stretch never starts with a tool result whose call it lost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from bench.policies import PolicyContext, _Baseline, render
from forge.llm.messages import Message

CODEX_AT = 0.9
"""Share of the budget at which Codex compacts (`context_window * 9 / 10`)."""
CODEX_USER_TOKENS = 20_000
"""Tokens of user messages Codex keeps verbatim after a compaction, newest first
(`COMPACT_USER_MESSAGE_MAX_TOKENS`, a constant: Codex does not scale it to the window)."""
CODEX_WINDOW = 272_000
"""gpt-5's input window in Codex's model table, the window that constant was set for:
`codex-scaled` keeps 20,000 / 272,000 of the budget (the replay's scaling, not Codex's)."""
CODEX_SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process. Use it to build on the work that has already been done."
)
"""The replay's stand-in for Codex's `templates/compact/summary_prefix.md`."""
CLAUDE_CODE_AT = (200_000 - 20_000 - 13_000) / 200_000
"""Share of the budget at which Claude Code auto-compacts: its effective window (the window
less 20,000 tokens kept for the summary) less `AUTOCOMPACT_BUFFER_TOKENS` (13,000), 167k of a
200k window (83.5 %), applied as that share of the replay's budget."""
CLAUDE_CODE_MICROCOMPACT_AT = 12
"""Tool results present (not yet cleared) above which microcompact clears the oldest."""
CLAUDE_CODE_MICROCOMPACT_KEEP = 5
"""Newest tool results microcompact keeps (the time-based path's count; the cached path's own
keep count is not public)."""
CLAUDE_CODE_CLEARED = "[Old tool result content cleared]"
CLAUDE_CODE_FILES = 5
"""Most recently read files Claude Code re-attaches after a compaction."""
CLAUDE_CODE_FILE_TOKENS = 5_000
"""Tokens each re-attached file may hold."""
CLAUDE_CODE_SUMMARY_HEADING = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:"
)
OPENHANDS_KEEP_FIRST = 4
"""Events (messages) at the start OpenHands' summarizing condenser always keeps."""
OPENHANDS_MAX_SIZE = 120
"""History length above which OpenHands condenses, to half of it (the session's and the
agent SDK's default)."""
OPENHANDS_CONFIG_MAX_SIZE = 100
"""`LLMSummarizingCondenserConfig`'s own default `max_size` (with `keep_first` 1): what a
`[condenser] type = "llm"` configuration without values runs (`openhands-100`)."""
OPENHANDS_CONFIG_KEEP_FIRST = 1
OPENHANDS_SUMMARY_HEADING = "[Summary of forgotten events]"
READ_TOOLS = frozenset({"read_file", "read", "view", "open", "open_file", "cat"})
"""Tool names that read a file (for `claude-code`'s re-attached files)."""
TEXT_READ_COMMANDS = frozenset({"cat", "open", "view", "less", "head", "nl"})
"""First words of a text action that reads the file named next."""
PATH_ARGUMENTS = ("path", "file_path", "filepath", "filename", "file_name")


def truncate_tokens(text: str, limit: int, count: Callable[[str], int]) -> str:
    """`text` cut to at most `limit` tokens, with a marker saying how many were cut."""
    total = count(text)
    if total <= limit:
        return text
    cut = max(0, len(text) * limit // total)
    while cut and count(text[:cut]) > limit:
        cut = cut * 9 // 10
    return f"{text[:cut]}\n…{total - count(text[:cut])} tokens truncated…"


def _lead(history: Sequence[Message]) -> int:
    return 1 if history and history[0].role == "system" else 0


def _tail_start(history: Sequence[Message], start: int) -> int:
    """`start` moved back so the kept stretch does not begin with a tool result."""
    while start > 0 and history[start].role == "tool":
        start -= 1
    return start


class _Compacting(_Baseline):
    """A policy that at some point replaces `history[:covered]` by `self.base`, and may send
    a placeholder (`self.cleared`) for some outputs after it."""

    def __init__(self, context: PolicyContext) -> None:
        super().__init__(context)
        self.base: list[Message] = []
        self.covered = 0
        self.summary = ""
        self.cleared: dict[int, Message] = {}

    def _build(self, history: Sequence[Message]) -> list[Message]:
        rest = [
            self.cleared.get(index, history[index]) for index in range(self.covered, len(history))
        ]
        if not self.covered:
            return rest
        return [*self.base, *rest]

    def _clear(self, index: int, message: Message, text: str) -> None:
        """Send `text` instead of the output at `index` from now on."""
        self.cleared[index] = Message(
            role=message.role, content=text, tool_call_id=message.tool_call_id, name=message.name
        )


class CodexPolicy(_Compacting):
    """Codex CLI's auto-compaction (`codex-rs/core/src/compact.rs`): at 90 % of the budget the
    whole history is summarized; the new history is the initial context (the system prompt),
    the user messages so far, newest first up to 20,000 tokens (the one that overflows cut to
    what remains), in their order, then the summary as a user message."""

    name = "codex"

    def __init__(self, context: PolicyContext, *, scaled: bool = False) -> None:
        super().__init__(context)
        self.allowance = (
            CODEX_USER_TOKENS * context.budget // CODEX_WINDOW if scaled else CODEX_USER_TOKENS
        )
        if scaled:
            self.name = "codex-scaled"

    async def prepare(self, history: Sequence[Message]) -> list[Message]:
        """The history, compacted first when it reached 90 % of the budget."""
        request = self._build(history)
        full = self.context.measure(request) >= CODEX_AT * self.context.budget
        if not full or self.covered >= len(history):
            return request
        lead = _lead(history)
        self.summary = await self.context.summarizer.summarize(render(request[lead:]))
        users = [history[i] for i in self.context.session.user_messages() if i < len(history)]
        kept: list[Message] = []
        remaining = self.allowance
        for message in reversed(users):
            if remaining <= 0:
                break
            tokens = self.context.count(message.content)
            if tokens <= remaining:
                kept.append(message)
                remaining -= tokens
            else:
                text = truncate_tokens(message.content, remaining, self.context.count)
                kept.append(Message(role="user", content=text))
                break
        kept.reverse()
        summary = Message(role="user", content=f"{CODEX_SUMMARY_PREFIX}\n{self.summary}")
        self.base = [*history[:lead], *kept, summary]
        self.covered = len(history)
        return self._build(history)


def _read_path(call_name: str, arguments: str) -> str | None:
    """The file a structured tool call reads, if it is a read."""
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return None
    if not isinstance(parsed, dict):
        return None
    path = next((parsed[k] for k in PATH_ARGUMENTS if isinstance(parsed.get(k), str)), None)
    if path is None:
        return None
    if call_name in READ_TOOLS or parsed.get("command") == "view":
        return str(path)
    return None


_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)


def _text_read_path(content: str) -> str | None:
    """The file a text action (the last fenced block of a reply) reads, if it is a read."""
    blocks = _FENCE.findall(content)
    if not blocks:
        return None
    words = blocks[-1].split()
    if len(words) >= 2 and words[0] in TEXT_READ_COMMANDS:
        return words[-1].strip("\"'")
    return None


def files_read(history: Sequence[Message], observations: set[int]) -> dict[str, str]:
    """Every file the history read, in order of its latest read, with that read's output."""
    reads: dict[str, str] = {}
    pending: dict[str, str] = {}
    for index, message in enumerate(history):
        if message.role == "assistant":
            for call in message.tool_calls:
                path = _read_path(call.name, call.arguments)
                if path is not None:
                    pending[call.id] = path
            path = _text_read_path(message.content) if not message.tool_calls else None
            if path is not None and index + 1 in observations and index + 1 < len(history):
                reads.pop(path, None)
                reads[path] = history[index + 1].content
        elif message.role == "tool" and message.tool_call_id in pending:
            path = pending.pop(message.tool_call_id)
            reads.pop(path, None)
            reads[path] = message.content
    return reads


class ClaudeCodePolicy(_Compacting):
    """Claude Code's context management: microcompact — once more than 12 tool results are
    present, all but the newest 5 are cleared (`[Old tool result content cleared]`) — and
    auto-compact at 83.5 % of the budget: the whole conversation becomes one summary (a user
    message), then the 5 most recently read files are attached again, each cut to 5,000
    tokens; the system prompt stays."""

    name = "claude-code"

    def _microcompact(self, history: Sequence[Message]) -> None:
        session = self.context.session
        present = [
            index
            for index in range(self.covered, len(history))
            if session.is_tool_output(index) and index not in self.cleared
        ]
        if len(present) <= CLAUDE_CODE_MICROCOMPACT_AT:
            return
        for index in present[:-CLAUDE_CODE_MICROCOMPACT_KEEP]:
            self._clear(index, history[index], CLAUDE_CODE_CLEARED)

    async def prepare(self, history: Sequence[Message]) -> list[Message]:
        """The history microcompacted, then compacted when it reached 83.5 % of the budget."""
        self._microcompact(history)
        request = self._build(history)
        full = self.context.measure(request) >= CLAUDE_CODE_AT * self.context.budget
        if not full or self.covered >= len(history):
            return request
        lead = _lead(history)
        self.summary = await self.context.summarizer.summarize(render(request[lead:]))
        reads = files_read(history, self.context.session.observations)
        attached = [
            Message(
                role="user",
                content=f"[File re-read after compaction: {path}]\n"
                + truncate_tokens(output, CLAUDE_CODE_FILE_TOKENS, self.context.count),
            )
            for path, output in list(reads.items())[-CLAUDE_CODE_FILES:]
        ]
        summary = Message(role="user", content=f"{CLAUDE_CODE_SUMMARY_HEADING}\n{self.summary}")
        self.base = [*history[:lead], summary, *attached]
        self.covered = len(history)
        return self._build(history)


class OpenHandsPolicy(_Compacting):
    """OpenHands' default condenser (`LLMSummarizingCondenser`, keep_first=4, max_size=120, as
    `openhands/server/session/session.py` configures it): once the view holds more than 120
    events (here: messages), it keeps the first 4, one summary of the forgotten middle (the
    previous summary included) and the newest events, 60 in all."""

    name = "openhands"

    def __init__(
        self,
        context: PolicyContext,
        max_size: int = OPENHANDS_MAX_SIZE,
        keep_first: int = OPENHANDS_KEEP_FIRST,
        name: str = "openhands",
    ) -> None:
        super().__init__(context)
        self.max_size = max_size
        self.keep_first = keep_first
        self.name = name

    def _head(self, history: Sequence[Message]) -> int:
        end = min(self.keep_first, len(history))
        while end < len(history) and history[end].role == "tool":
            end += 1  # results stay with their call
        return end

    async def prepare(self, history: Sequence[Message]) -> list[Message]:
        """The history, condensed first when it passed `max_size` messages."""
        request = self._build(history)
        if len(request) <= self.max_size:
            return request
        head = self._head(history)
        tail = self.max_size // 2 - head - 1
        start = _tail_start(history, max(len(history) - tail, head))
        if start <= max(self.covered, head):
            return request
        forgotten = history[max(self.covered, head) : start]
        material = render(forgotten)
        if self.summary:
            material = f"{OPENHANDS_SUMMARY_HEADING}\n{self.summary}\n\n{material}"
        self.summary = await self.context.summarizer.summarize(material)
        summary = Message(role="user", content=f"{OPENHANDS_SUMMARY_HEADING}\n{self.summary}")
        self.base = [*history[:head], summary]
        self.covered = start
        return self._build(history)
