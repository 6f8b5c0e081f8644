"""IngestCapStrategy (tier 0): no single tool output may take more than a set share of the budget.

An output above `ingest_max_share` of the budget keeps its head and its tail (half each) and
says what was elided and how to get it (`read_file` with a line range, or a narrower command).
It is checked once, when it arrives (O(new) per LLM call). An output over its share by less
than masking's minimum saving (`MINIMUM_SAVING_TOKENS`) is left whole on arrival: such a cut
would lose the output verbatim to free less than a placeholder is worth (docs/adr/0038 §8).
Excluded tools' outputs are never touched. After a context overflow the manager calls
`cap_all` with a smaller share, which also reaches outputs already checked — the newest
included — so the retry is smaller.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.recall import original_id, recall_hint
from forge.context.strategies.contract import Capabilities
from forge.context.strategies.deterministic import (
    AppendCursor,
    DeterministicStrategy,
    excluded_call_ids,
)
from forge.context.strategies.masking import MINIMUM_SAVING_TOKENS
from forge.llm.messages import Message, MessageKind
from forge.llm.protocols import TokenCounter

_NUMBERED_LINE = re.compile(r"^ *(\d+) \| ", re.MULTILINE)
"""A line of `read_file` output: the file's line number, right-aligned, then ` | `."""

MINIMUM_CAP_TOKENS = 256
"""No output is ever cut below this many tokens."""
INGEST_CAP = "ingest_cap"


class IngestCapStrategy(DeterministicStrategy):
    """Cuts oversized tool outputs to head + tail as they arrive."""

    name = INGEST_CAP
    capabilities = Capabilities(forceable=False, in_place=True)

    def __init__(self, settings: ContextSettings, counter: TokenCounter) -> None:
        super().__init__(settings, counter)
        self._cursor = AppendCursor(relevant=_never)
        self._pending: list[tuple[int, str]] = []
        """(position, id) of outputs seen over the cap and not yet cut. An output replaced in
        place since (masked) is not news: its id no longer stands at its position."""
        self._limit: int | None = None
        self._excluded_calls: set[str] = set()

    def limit(self, max_tokens: int) -> int:
        """The most tokens one output may take under this budget."""
        return max(MINIMUM_CAP_TOKENS, int(self.settings.ingest_max_share * max_tokens))

    def _scan(self, conversation: Conversation, max_tokens: int) -> list[tuple[int, str]]:
        limit = self.limit(max_tokens)
        restarted, fresh = self._cursor.new_messages(conversation)
        if restarted or limit != self._limit:
            self._pending = []
            self._excluded_calls = set()
            if not restarted:
                self._cursor.reset()
                _, fresh = self._cursor.new_messages(conversation)
        self._limit = limit
        excluded = set(self.settings.excluded_tools)
        first = len(conversation) - len(fresh)
        for offset, message in enumerate(fresh):
            self._excluded_calls.update(excluded_call_ids([message], excluded))
            if (
                _cappable(message, excluded, self._excluded_calls)
                and self.counter.count_message(message) > limit + MINIMUM_SAVING_TOKENS
            ):
                self._pending.append((first + offset, message.id))
        return self._pending

    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """An output above the cap arrived."""
        return bool(self._scan(conversation, max_tokens))

    def pending_items(
        self, conversation: Conversation, max_tokens: int, *, force: bool = False
    ) -> int:
        """Outputs a run now would cut."""
        return len(self._scan(conversation, max_tokens))

    def apply(self, conversation: Conversation, max_tokens: int, *, force: bool = False) -> int:
        """Cut every pending output; returns how many were cut."""
        pending = list(self._scan(conversation, max_tokens))
        self._pending = []
        limit = self.limit(max_tokens)
        cut = 0
        for index, message_id in pending:
            if index >= len(conversation) or conversation[index].id != message_id:
                continue  # replaced in place since (masked): nothing left to cut
            if _cut_in_place(conversation, index, limit, self.counter):
                cut += 1
        self._cursor.new_messages(conversation)  # our own edits are not news
        return cut

    def cap_all(
        self,
        conversation: Conversation,
        limit: int,
        *,
        excluded_tools: Collection[str],
        spare_newest: int = 0,
    ) -> int:
        """Cut every output above `limit` tokens but the newest `spare_newest` outputs (after
        an overflow, or when nothing else can make the prompt fit). Returns how many were
        cut."""
        excluded = set(excluded_tools)
        kept_calls = excluded_call_ids(conversation, excluded)
        outputs = [
            index
            for index in range(len(conversation))
            if _cappable(conversation[index], excluded, kept_calls)
        ]
        if spare_newest:
            outputs = outputs[:-spare_newest]
        cut = 0
        for index in outputs:
            if self.counter.count_message(conversation[index]) <= limit:
                continue
            if _cut_in_place(conversation, index, limit, self.counter):
                cut += 1
        self._cursor.reset()
        self._pending = []
        return cut


def _never(message: Message) -> bool:
    """No in-place replacement concerns the cap: it only ever shrinks an output."""
    return False


def _cappable(message: Message, excluded: Collection[str], kept_calls: Collection[str]) -> bool:
    if message.kind is MessageKind.OBSERVATION:
        return True
    return (
        message.role == "tool"
        and message.kind is MessageKind.NORMAL
        and (message.name or "") not in excluded
        and (message.tool_call_id or "") not in kept_calls
    )


def _cut_in_place(
    conversation: Conversation, index: int, limit: int, counter: TokenCounter
) -> bool:
    message = conversation[index]
    tokens = counter.count_message(message)
    text = head_and_tail(
        message.content, limit, counter, tool=message.name or "", recall=recall_hint(message)
    )
    if text == message.content:
        return False
    meta = dict(message.meta)
    meta.setdefault("characters_before", len(message.content))
    meta.setdefault("tokens_before", tokens)
    meta["capped"] = True
    capped = Message(
        role=message.role,
        content=text,
        tool_call_id=message.tool_call_id,
        name=message.name,
        kind=message.kind,
        # An output cut again (the last resort halves its cap) still stands for the uncut
        # original, so whatever later replaces it names the key `recall` finds.
        replaces=(original_id(message),),
        meta=meta,
        images=message.images,  # the cap is on the text; an old image is masked later
    )
    conversation.replace_message(index, capped)
    return True


def head_and_tail(
    text: str, limit: int, counter: TokenCounter, *, tool: str = "", recall: str = ""
) -> str:
    """`text` if it fits in `limit` tokens; else its first and last lines (about half the
    limit each) around a marker saying what was elided and how to read it (`recall`, e.g.
    "recall 3f9a2c", names the call that returns all of it)."""
    total = counter.count_text(text)
    if total <= limit:
        return text
    lines = text.splitlines(keepends=True)
    characters_per_token = max(1.0, len(text) / max(1, total))
    budget = int((limit - 60) * characters_per_token)  # 60 tokens for the marker
    while True:
        head, tail, first_elided, last_elided = _split(lines, text, max(0, budget))
        elided = text[len(head) : len(text) - len(tail)]
        marker = _marker(elided, first_elided, last_elided, counter, tool, recall)
        result = f"{head}{marker}{tail}"
        if counter.count_text(result) <= limit or budget <= 0:
            return result
        budget = int(budget * 0.8)


def _split(lines: list[str], text: str, budget: int) -> tuple[str, str, int, int]:
    """(head, tail, first elided line number, last elided line number), each half of
    `budget` characters; a single huge line is cut by characters."""
    half = budget // 2
    head_lines: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) > half:
            break
        head_lines.append(line)
        size += len(line)
    tail_lines: list[str] = []
    size = 0
    for line in reversed(lines[len(head_lines) :]):
        if size + len(line) > half:
            break
        tail_lines.append(line)
        size += len(line)
    tail_lines.reverse()
    if len(head_lines) + len(tail_lines) >= len(lines) or (not head_lines and not tail_lines):
        # One huge line (minified output): cut by characters.
        return text[:half], text[len(text) - half :] if half else "", 1, max(1, len(lines))
    first = len(head_lines) + 1
    last = len(lines) - len(tail_lines)
    return "".join(head_lines), "".join(tail_lines), first, last


def _marker(
    elided: str, first: int, last: int, counter: TokenCounter, tool: str, recall: str = ""
) -> str:
    lines = last - first + 1
    noun = "line" if lines == 1 else "lines"
    tokens = counter.count_text(elided)
    numbers = _NUMBERED_LINE.findall(elided) if tool == "read_file" else []
    if numbers:
        # The file's own line numbers: the output's count differently (a header line first,
        # and read_file's own cap may have elided lines in between).
        how = f"read them with read_file start_line={numbers[0]} end_line={numbers[-1]}"
    elif tool == "read_file":
        how = f"read them with read_file start_line/end_line (output lines {first}-{last})"
    else:
        how = "narrow the command, search or path to see them"
    if recall:
        how += f", or {recall} for all of it"
    return (
        f"\n[... {lines} {noun} ({len(elided)} characters, ~{tokens} tokens) elided to fit the "
        f"context window; {how} ...]\n"
    )
