"""A resumed session's pinned work ledger (docs/adr/0050) is not replayed as a user message."""

from __future__ import annotations

from pathlib import Path

from forge.acp.replay import replay_updates
from forge.llm.messages import Message, MessageKind, assistant, system, user


def test_the_work_ledger_is_not_replayed() -> None:
    ledger = Message(role="user", content="[Work ledger: ...]", kind=MessageKind.LEDGER)
    messages = [system("s"), user("fix it"), ledger, assistant("done")]
    updates = list(replay_updates(messages, Path.cwd(), lambda call: call.name))
    shown = str(updates)
    assert "fix it" in shown and "done" in shown
    assert "Work ledger" not in shown
