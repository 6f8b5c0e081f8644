"""The results an interrupted turn leaves (forge.agent.turn.interruption): which calls were cut off,
which never ran, which question went unanswered — pure functions over messages."""

from __future__ import annotations

from forge.agent.turn.interruption import (
    NOT_RUN_RESULT,
    UNANSWERED_QUESTION_RESULT,
    answer_interrupted_calls,
    calls_not_run,
)
from forge.context.conversation import CANCELLED_RESULT, Conversation
from forge.llm.messages import ToolCall, assistant, system, tool_result, user


def call(number: int, name: str = "write_file") -> ToolCall:
    return ToolCall(f"call_{number}", name, "{}")


def test_the_running_call_is_cut_off_and_the_others_never_ran() -> None:
    conversation = Conversation()
    calls = (call(1), call(2, "execute_command"), call(3), call(4, "ask_question"))
    for message in (system("s"), user("go"), assistant("", calls)):
        conversation.append(message)
    conversation.append(tool_result(calls[0], "written"))
    assert answer_interrupted_calls(conversation, running_call_id="call_2") == 3
    results = [(m.content, m.meta) for m in conversation.messages[4:]]
    assert results == [
        (CANCELLED_RESULT, {"cancelled": True}),
        (NOT_RUN_RESULT, {"cancelled": True, "not_run": True}),
        (UNANSWERED_QUESTION_RESULT, {"cancelled": True}),
    ]
    assert conversation.is_valid()


def test_calls_not_run_are_those_of_the_latest_turn_only() -> None:
    conversation = Conversation()
    old, new = call(1), call(2)
    for message in (system("s"), user("first"), assistant("", (old,))):
        conversation.append(message)
    answer_interrupted_calls(conversation, running_call_id=None)
    assert [c.id for c, _ in calls_not_run(conversation.messages)] == ["call_1"]
    conversation.append(user("second"))
    assert calls_not_run(conversation.messages) == []
    conversation.append(assistant("", (new,)))
    answer_interrupted_calls(conversation, running_call_id=None)
    assert [(c.id, r.content) for c, r in calls_not_run(conversation.messages)] == [
        ("call_2", NOT_RUN_RESULT)
    ]
