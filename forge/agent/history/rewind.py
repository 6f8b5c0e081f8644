"""Rewinding a session: its turns as the session log recorded them, and the conversation as it
was just before one of them — compacted turns included, since the log keeps every message.

A rewind writes a `rewind` record (the turn rewound to) and then one `replace` record swapping
the whole conversation for the rewound one, so replaying the file (`--continue`) rebuilds the
rewound conversation and later listings leave out the turns it removed. See
docs/adr/0027-checkpoints.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from forge.agent.history.session_file import SessionLog, apply_replacement, read_records
from forge.agent.input.mentions import split_attachments
from forge.agent.message_meta import TYPED_KEY, is_stop_feedback, typed_text
from forge.agent.subagents.mentions import without_agent_request
from forge.agent.tools.read_ledger import FileReadLedger
from forge.agent.turn.interruption import ensure_valid
from forge.context.conversation import Conversation
from forge.llm.messages import Message, MessageKind

SKIPPED_PREFIX = "[skipped:"
"""How the result of a call skipped by an ended turn starts
(`forge.agent.turn.loop.SKIPPED_RESULT`)."""

COMMAND_TOOLS = frozenset({"execute_command"})
"""Tools whose effects no checkpoint can take back."""


@dataclass(slots=True)
class SessionTurn:
    """One user turn of a session, as the log recorded it."""

    id: str
    """The id of the user message that started it."""
    text: str
    created: float
    ran_commands: bool = False
    """It ran shell commands, which cannot be undone."""
    in_context: bool = True
    """Its user message is still in the conversation (False: compacted away)."""

    def title(self, words: int = 8) -> str:
        """The first `words` words of the user message, on one line."""
        parts = self.text.split()
        return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def starts_turn(message: Message) -> bool:
    """A message the user typed (not a summary, nor Forge's note that a turn was cut off)."""
    return (
        message.role == "user"
        and message.kind is MessageKind.NORMAL
        and message.meta.get("note") is None
        and not is_stop_feedback(message)  # a Stop hook's words, in files from before the note
    )


def ran(result: Message) -> bool:
    """Whether the tool-result message `result` is of a call that actually ran: not one the
    user rejected nor one the permission mode refused (forge.agent.turn.tool_calls marks those),
    nor one skipped because the turn ended before it started (forge.agent.turn.loop), nor one an
    interrupted turn never started (`not_run`, forge.agent.turn.interruption). A call cut
    off while running counts as run: it may have done something."""
    if result.meta.get("rejected") or result.meta.get("refused") or result.meta.get("not_run"):
        return False
    return not (result.meta.get("cancelled") and result.content.startswith(SKIPPED_PREFIX))


def session_turns(path: Path) -> list[SessionTurn]:
    """The turns of the session file `path` on the current line of history, oldest first:
    compacted turns included, turns removed by an earlier rewind left out."""
    records, _ = read_records(path)
    turns: list[SessionTurn] = []
    messages: list[Message] = []
    commands: set[str] = set()  # ids of the command calls of the turn still to be answered
    for record in records:
        kind = record.get("type")
        try:
            if kind == "message":
                message = Message.from_record(record["message"])
                messages.append(message)
                if starts_turn(message):
                    typed = typed_text(message)  # `/greet Alice`, not the skill's text
                    if TYPED_KEY not in message.meta:  # written before it was recorded
                        typed, _ = split_attachments(typed)  # the text, not the files
                        typed = without_agent_request(typed)  # nor what `@agent-` added
                    turns.append(SessionTurn(message.id, typed, message.created_at))
                    commands.clear()
                elif turns:
                    commands |= {c.id for c in message.tool_calls if c.name in COMMAND_TOOLS}
                    if message.tool_call_id in commands and ran(message):
                        turns[-1].ran_commands = True
            elif kind == "replace":
                apply_replacement(messages, record)
            elif kind == "rewind":
                cut = [index for index, turn in enumerate(turns) if turn.id == record["turn"]]
                if cut:
                    del turns[cut[0] :]
        except (KeyError, TypeError, ValueError):
            continue  # replay skips the same records (forge.agent.history.session_file)
    present = {message.id for message in messages}
    for turn in turns:
        turn.in_context = turn.id in present
    return turns


def conversation_before(path: Path, turn_id: str) -> list[Message]:
    """The conversation the session file `path` held just before the turn `turn_id` began;
    LookupError if the file has no such turn."""
    records, _ = read_records(path)
    messages: list[Message] = []
    for record in records:
        kind = record.get("type")
        try:
            if kind == "message":
                message = Message.from_record(record["message"])
                if message.id == turn_id:
                    return messages
                messages.append(message)
            elif kind == "replace":
                apply_replacement(messages, record)
        except (KeyError, TypeError, ValueError):
            continue
    raise LookupError(f"no turn {turn_id} in {path.name}")


def rewind_conversation(
    conversation: Conversation,
    log: SessionLog,
    turn_id: str,
    ledger: FileReadLedger | None = None,
) -> None:
    """Make `conversation` what it was before turn `turn_id`, recorded in `log`; `ledger`
    (what the model has read) is cleared, so the model reads files again before writing them.

    The current system prompt is kept. The result is provider-valid (AGENTS.md invariant 1):
    whatever the log held is repaired like a resumed session.
    """
    messages = conversation_before(log.path, turn_id)
    current = conversation.messages
    if messages and current and messages[0].role == "system" and current[0].role == "system":
        messages[0] = current[0]
    log.record_rewind(turn_id)
    conversation.replace_range(0, len(conversation), messages)
    ensure_valid(conversation)
    if ledger is not None:
        ledger.clear()
