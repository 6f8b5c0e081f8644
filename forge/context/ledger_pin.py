"""Pinning the work ledger: one message, right after the head, rewritten only by compaction.

`LedgerPin.observe` records every finished tool call as it arrives (O(new messages); a change
that moves messages makes it look over the list once, skipping the calls it already has), so
the ledger knows what a summary later folds away. `LedgerPin.pin` puts the rendered ledger in
the prompt — one user-role message of kind `LEDGER`, right after the system prompt and the
pending task, inside the head every strategy keeps — and is called by the manager only when a
compaction ran — first with one that moves messages (a summary or a drop: every tier looks
over the list again then anyway, so inserting the ledger costs no extra pass; masking alone
leaves every call in place), then with any. Between compactions its bytes never change, so a
provider's prompt cache keeps hitting (the work since is verbatim in the messages after it).
The ledger is bounded by `LEDGER_SHARE` of the budget, oldest entries aggregated first
(`forge.context.ledger_render`). Its full record is in the message's meta, so `--continue`
resumes it whole. See docs/adr/0050-context-engine-v4.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import Enum

from forge.context.conversation import Conversation
from forge.context.groups import head_end
from forge.context.ledger_render import render_ledger
from forge.context.strategies.deterministic import AppendCursor
from forge.context.work_ledger import WorkLedger, fenced_action
from forge.llm.messages import Message, MessageKind, ToolCall

LEDGER_SHARE = 0.025
"""Share of the prompt budget the pinned ledger may take (aggregated beyond it)."""
MINIMUM_LEDGER_TOKENS = 100
"""The ledger's room on the smallest budgets."""
LEDGER_META = "work_ledger"


def compaction_since(conversation: Conversation, version: int) -> Compaction:
    """What changed the conversation since `version`, beyond appends, the ingest cap (an
    output cut in place, `meta["capped"]`) and pinned messages moving: NONE, IN_PLACE
    (outputs masked or pruned where they stood) or MOVED (a summary or a drop)."""
    edits = conversation.edits_since(version)
    if edits is None:
        return Compaction.MOVED
    found = Compaction.NONE
    for edit in edits:
        if not edit.in_place:
            if all(m.kind in _PINNED for m in edit.removed) and edit.inserted <= len(edit.removed):
                continue
            return Compaction.MOVED
        now = conversation[edit.start] if edit.start < len(conversation) else None
        if now is None or not (now.meta.get("capped") or now.kind in _PINNED):
            found = Compaction.IN_PLACE
    return found


class Compaction(Enum):
    """How a conversation was compacted (`compaction_since`)."""

    NONE = "none"
    IN_PLACE = "in_place"
    MOVED = "moved"


_PINNED = (MessageKind.PLAN, MessageKind.LEDGER)


def ledger_limit(max_tokens: int) -> int:
    """Tokens the pinned ledger may take in a prompt budget of `max_tokens`."""
    return max(MINIMUM_LEDGER_TOKENS, int(max_tokens * LEDGER_SHARE))


class LedgerPin:
    """Keeps one conversation's work ledger and pins it on request (module docstring)."""

    def __init__(self) -> None:
        self.ledger = WorkLedger()
        self._cursor = AppendCursor()
        self._pending: dict[str, ToolCall] = {}
        self._action: Message | None = None
        """The assistant message an observation that follows answers (a text action)."""
        self._loaded = False

    def observe(self, conversation: Conversation) -> None:
        """Record the calls finished since the last look."""
        restarted, fresh = self._cursor.new_messages(conversation)
        messages = conversation.messages if restarted or not self._loaded else fresh
        if not self._loaded:
            self._loaded = True
            pinned = next((m for m in messages if m.kind is MessageKind.LEDGER), None)
            if pinned is not None:  # a resumed session: its ledger as last pinned
                self.ledger = WorkLedger.from_meta(pinned.meta.get(LEDGER_META))
        for message in messages:
            if message.role == "assistant":
                self._action = message
            for call in message.tool_calls:
                if call.id not in self.ledger.calls:
                    self._pending[call.id] = call
            if message.role == "tool" and message.tool_call_id in self._pending:
                self.ledger.record(self._pending.pop(message.tool_call_id), message)
            elif message.kind is MessageKind.OBSERVATION:
                self._observed(message)

    def _observed(self, message: Message) -> None:
        """An observation is a command's output too: the user's `!command` (its meta names
        the command) or a text action's (the fenced block of the reply before it)."""
        command = message.meta.get("user_command")
        if not isinstance(command, str):
            action = self._action
            command = fenced_action(action.content) if action and not action.tool_calls else None
        self._action = None
        if command:
            arguments = json.dumps({"command": command})
            call = ToolCall(f"observation-{message.id}", "execute_command", arguments)
            self.ledger.record(call, message)

    def text(self, max_tokens: int, count: Callable[[str], int]) -> str:
        """The ledger as the prompt would show it in a budget of `max_tokens` ("" if empty)."""
        return render_ledger(self.ledger, ledger_limit(max_tokens), count)

    def pin(
        self,
        conversation: Conversation,
        max_tokens: int,
        count: Callable[[str], int],
        *,
        insert: bool = True,
    ) -> bool:
        """Write the ledger into the conversation (in place of the pinned one, else right after
        the head unless `insert` is False); True if anything changed. Nothing is pinned while
        the ledger is empty."""
        self.observe(conversation)
        text = self.text(max_tokens, count)
        if not text:
            return False
        messages = conversation.messages
        position = next((i for i, m in enumerate(messages) if m.kind is MessageKind.LEDGER), None)
        if position is not None and messages[position].content == text:
            return False
        if position is None and not insert:
            return False
        message = Message(
            role="user",
            content=text,
            kind=MessageKind.LEDGER,
            meta={LEDGER_META: self.ledger.to_meta()},
        )
        if position is not None:
            conversation.replace_message(position, message)
        else:
            at = head_end(messages)
            while at < len(messages) and messages[at].kind is MessageKind.PLAN:
                at += 1  # the plan stays right after the latest user message (ADR 0028)
            conversation.replace_range(at, at, [message])
        self._cursor.new_messages(conversation)  # our own change is not news
        return True
