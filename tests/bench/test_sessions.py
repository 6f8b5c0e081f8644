"""Sessions for the replay: instructions, observations, turn-ending tools, the combined session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.sessions import (
    DANGLING_RESULT,
    NEXT_TASK,
    annotate,
    combine,
    load_session,
    touched_paths,
    trajectory_files,
)
from forge.context.conversation import Conversation
from forge.llm.messages import Message, ToolCall
from tests.bench.sessions_support import tool_session, write_trajectory


def _text_action_session() -> list[Message]:
    return [
        Message(role="system", content="Answer with one bash block."),
        Message(role="user", content="Please fix the missing colon."),
        Message(role="assistant", content="```bash\ncat f.py\n```"),
        Message(role="user", content="<output>def f()\n</output>"),
        Message(role="assistant", content="```bash\nsed -i s/)/):/ f.py\n```"),
        Message(role="user", content="<returncode>0</returncode>"),
    ]


def test_first_user_message_is_the_instruction_and_later_ones_are_observations() -> None:
    session = annotate("text", _text_action_session())
    assert session.instructions == {1}
    assert session.observations == {3, 5}
    assert session.is_tool_output(3) and not session.is_tool_output(1)


def test_turn_ending_tools_become_task_completion_and_empty_replies_are_dropped() -> None:
    finish = ToolCall(id="c1", name="finish", arguments='{"message": "done"}')
    submit = ToolCall(id="c2", name="submit")
    session = annotate(
        "ends",
        [
            Message(role="assistant", content=""),
            Message(role="user", content="Do it."),
            Message(role="assistant", content="", tool_calls=(finish,)),
            Message(role="tool", content="ok", tool_call_id="c1"),
            Message(role="assistant", content="", tool_calls=(submit,)),
        ],
    )
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "assistant"]
    names = [call.name for m in session.messages for call in m.tool_calls]
    assert names == ["task_completion", "task_completion"]
    assert session.messages[1].tool_calls[0].arguments == '{"message": "done"}'
    assert session.instructions == {0}


def test_combined_session_introduces_each_task_and_keeps_one_system_prompt() -> None:
    first = annotate("first", _text_action_session())
    second_messages = tool_session(2, instruction="Add a --verbose flag.")
    finish = ToolCall(id="end", name="finish")
    second_messages.append(Message(role="assistant", content="", tool_calls=(finish,)))
    second = annotate("second", second_messages)
    third = annotate(
        "third",
        [Message(role="assistant", content="[run]"), Message(role="user", content="listing")],
    )
    combined = combine([first, second, third])
    messages = combined.messages
    assert [m.role for m in messages].count("system") == 1
    instructions = [messages[i].content for i in sorted(combined.instructions)]
    assert instructions == [
        "Please fix the missing colon.",
        NEXT_TASK + "Add a --verbose flag.",
        NEXT_TASK + "carry on with the work recorded as third.",
    ]
    # Observations keep their kind at their new positions.
    observed = sorted(messages[i].content for i in combined.observations)
    assert observed == sorted(
        ["<output>def f()\n</output>", "<returncode>0</returncode>", "listing"]
    )
    # The second task's final call is answered, so the next task starts on a valid list.
    closing = messages.index(
        next(m for m in messages if m.tool_calls and m.tool_calls[0].id == "end")
    )
    assert messages[closing + 1].content == DANGLING_RESULT
    assert messages[closing + 1].tool_call_id == "end"
    assert Conversation(messages).problems() == []


def test_touched_paths_are_the_path_like_arguments_in_order_of_first_use() -> None:
    calls = [
        ToolCall(id="a", name="read_file", arguments=json.dumps({"path": "src/a.py"})),
        ToolCall(
            id="b", name="find_file", arguments=json.dumps({"file_name": "b.py", "dir": "src"})
        ),
        ToolCall(id="c", name="edit", arguments=json.dumps({"path": "src/a.py", "file_text": "x"})),
        ToolCall(id="d", name="bash", arguments="not json"),
    ]
    messages = [Message(role="assistant", tool_calls=(call,)) for call in calls]
    assert touched_paths(messages) == ["src/a.py", "b.py", "src"]


def test_loading_a_missing_corpus_fails_loudly(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        trajectory_files(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError):
        trajectory_files(tmp_path)
    with pytest.raises(FileNotFoundError):
        load_session(tmp_path / "missing.messages.json")
    path = write_trajectory(tmp_path / "one.messages.json", tool_session(1))
    assert trajectory_files(tmp_path) == [path]
    assert load_session(path).name == "one"
