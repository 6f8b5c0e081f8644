"""The fallback ladder: deterministic, no LLM call, protected messages kept, valid result."""

from __future__ import annotations

from forge.context.fallback import (
    apply_fallback_ladder,
    drop_oldest,
    prune_tool_outputs,
    tail_start,
)
from forge.context.ledger import Ledger, collect_ledger
from forge.llm.messages import Message, MessageKind, user
from tests.context.builders import conversation, counter, filler, group, ids, task_start, words

EXCLUDED = {"task_completion", "ask_question", "converse"}


def commands(count: int, size: int = 300) -> list[Message]:
    messages: list[Message] = []
    for number in range(count):
        messages.extend(
            group(
                "execute_command",
                words(size, f"c{number:02d}") + "\n[exit code 0]",
                arguments={"command": f"pytest -k case{number}"},
            )
        )
    return messages


def test_tail_start_is_a_safe_boundary_holding_at_least_keep_recent() -> None:
    messages = conversation(task_start(), commands(3)).messages
    assert tail_start(messages, 1) == 6  # the last group is two messages
    assert tail_start(messages, 2) == 6
    assert tail_start(messages, 3) == 4
    assert tail_start(messages, 100) == 0
    assert tail_start(messages, 0) == 8


def test_step_one_replaces_old_outputs_with_a_one_line_placeholder() -> None:
    exact = counter()
    old = commands(4)
    chat = conversation(task_start(), old, commands(1))
    before = exact.count_messages(chat.messages)
    pruned = prune_tool_outputs(
        chat, exact, target_tokens=0, excluded_tools=EXCLUDED, keep_recent=2
    )
    assert pruned == 4
    placeholder = chat[3]
    assert placeholder.role == "tool" and placeholder.kind is MessageKind.PRUNED
    assert placeholder.tool_call_id == old[0].tool_calls[0].id
    assert placeholder.replaces == (old[1].id,)
    assert "execute_command" in placeholder.content
    assert "pytest -k case0" in placeholder.content
    assert f"{len(old[1].content)} characters" in placeholder.content
    assert "\n" not in placeholder.content
    assert chat[-1].kind is MessageKind.NORMAL  # the recent tail is untouched
    assert exact.count_messages(chat.messages) < before
    assert chat.is_valid()


def test_step_one_stops_as_soon_as_the_target_is_met() -> None:
    exact = counter()
    chat = conversation(task_start(), commands(4), commands(1))
    total = exact.count_messages(chat.messages)
    pruned = prune_tool_outputs(
        chat, exact, target_tokens=total - 100, excluded_tools=EXCLUDED, keep_recent=2
    )
    assert pruned == 1


def test_step_two_drops_oldest_units_keeping_head_latest_user_and_excluded() -> None:
    exact = counter()
    head = task_start()
    question = group("ask_question", "answer " + words(300), arguments={"question": "why?"})
    latest = user("please continue")
    chat = conversation(head, commands(3), question, commands(3), latest, commands(2))
    dropped = drop_oldest(chat, exact, target_tokens=0, excluded_tools=EXCLUDED, keep_recent=4)
    messages = chat.messages
    assert dropped == 12
    assert ids(messages[:2]) == ids(head)
    assert all(m in messages for m in question)
    assert latest in messages
    markers = [m for m in messages if m.kind is MessageKind.PRUNED]
    assert len(markers) == 2  # one per stretch between protected messages
    assert markers[0].role == "assistant"
    assert "6 messages, 3 tool calls" in markers[0].content
    # The ledger survives in meta (the pinned work ledger shows it, ADR 0050) ...
    assert "`pytest -k case0` (exit 0)" in Ledger.from_meta(markers[0].meta["ledger"]).render()
    assert "(recall " in markers[0].content  # ... and every dropped output keeps its key
    assert chat.is_valid()


def test_ladder_needs_no_llm_and_reaches_the_target() -> None:
    exact = counter()
    chat = conversation(task_start(), commands(30), user("go on"), commands(2))
    result = apply_fallback_ladder(
        chat, exact, target_tokens=2000, excluded_tools=EXCLUDED, keep_recent=20
    )
    assert result.tokens_after == exact.count_messages(chat.messages) <= 2000
    assert result.tool_outputs_pruned > 0
    assert result.describe() is not None
    assert chat.is_valid()


def test_ladder_shrinks_the_tail_when_the_recent_part_is_too_big() -> None:
    exact = counter()
    chat = conversation(task_start(), commands(5, size=2000))
    result = apply_fallback_ladder(
        chat, exact, target_tokens=3000, excluded_tools=EXCLUDED, keep_recent=20
    )
    assert result.tokens_after <= 3000
    assert chat[-1].kind is MessageKind.NORMAL  # the very last result is always kept
    assert chat.is_valid()


def test_ladder_does_nothing_under_target() -> None:
    exact = counter()
    chat = conversation(task_start(), commands(3))
    before = ids(chat.messages)
    result = apply_fallback_ladder(
        chat, exact, target_tokens=10**6, excluded_tools=EXCLUDED, keep_recent=20
    )
    assert not result.changed and result.describe() is None
    assert ids(chat.messages) == before


def test_excluded_tools_outputs_are_never_pruned_and_empty_exclusion_prunes_them() -> None:
    exact = counter()
    done = group("task_completion", words(500), arguments={"summary": "done"})
    chat = conversation(task_start(), done, filler(3))
    prune_tool_outputs(chat, exact, target_tokens=0, excluded_tools=EXCLUDED, keep_recent=1)
    assert chat[3] is done[1]
    prune_tool_outputs(chat, exact, target_tokens=0, excluded_tools=set(), keep_recent=1)
    assert chat[3].kind is MessageKind.PRUNED


def test_a_pruned_command_output_keeps_its_exit_code_for_later_ledgers() -> None:
    exact = counter()
    failing = group(
        "execute_command",
        words(400, "log") + "\n[exit code 2]",  # execute_command's own status line
        arguments={"command": "cargo test"},
    )
    read = group("read_file", words(400, "src") + "\nexit code 9 mentioned in a file")
    chat = conversation(task_start(), failing, read, filler(2))
    prune_tool_outputs(chat, exact, target_tokens=0, excluded_tools=EXCLUDED, keep_recent=2)
    command_placeholder, read_placeholder = chat[3], chat[5]
    assert command_placeholder.kind is MessageKind.PRUNED
    assert f"exit code 2; recall {chat[3].replaces[0][:6]}]" in command_placeholder.content
    assert command_placeholder.meta["exit_code"] == 2
    assert "exit code" not in read_placeholder.content  # only commands have exit codes
    ledger = collect_ledger(chat.messages)
    assert [(c.command, c.exit_code) for c in ledger.commands] == [("cargo test", 2)]
