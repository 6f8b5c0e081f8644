"""The rows a resumed conversation shows (forge.tui.history, docs/adr/0032): each rule that
makes them match what the live chat showed, on hand-built message lists."""

from __future__ import annotations

import json

from forge.agent.turn.interruption import INTERRUPTED_NOTE, cancelled_result, note_cut_off_turn
from forge.agent.turn.loop import SKIPPED_RESULT
from forge.context.conversation import Conversation
from forge.llm.messages import Message, ToolCall, assistant, tool_result, user
from forge.tui import history
from forge.tui.history import (
    CUT_OFF_NOTICE,
    INTERRUPTED_TURN_NOTE,
    UNANSWERED_NOTICE,
    UNANSWERED_TURN_NOTE,
    AnswerRow,
    NoticeRow,
    ToolRow,
    UserRow,
    estimated_lines,
    history_rows,
    rows_to_fill,
)


def call(name: str, call_id: str, **arguments: str) -> ToolCall:
    return ToolCall(call_id, name, json.dumps(arguments))


def described(rows: list[history.HistoryRow]) -> list[str]:
    out = []
    for row in rows:
        if isinstance(row, ToolRow):
            out.append(f"tool {row.call.name} {row.status} {row.status_text}")
        elif isinstance(row, AnswerRow):
            out.append(f"answer {row.text}")
        elif isinstance(row, UserRow):
            out.append(f"user {row.text}")
        elif isinstance(row, NoticeRow):
            out.append(f"notice {row.text}")
        else:
            out.append(type(row).__name__)
    return out


def test_task_completion_and_converse_are_answers_and_need_no_note() -> None:
    read = call("read_file", "c1", path="a.txt")
    done = call("task_completion", "c2", result="All done.")
    chat = call("converse", "c3", message="Hello there.")
    messages = [
        user("do it"),
        assistant("", (read,)),
        tool_result(read, "a"),
        assistant("", (done,)),
        tool_result(done, "All done."),
        user("hi"),
        assistant("", (chat,)),
        tool_result(chat, "Hello there."),
    ]
    assert described(history_rows(messages)) == [
        "user do it",
        "tool read_file ok done",
        "answer All done.",
        "user hi",
        "answer Hello there.",
    ]


def test_a_turn_ending_in_a_tool_result_says_it_has_no_answer_where_it_ends() -> None:
    read = call("read_file", "c1", path="a.txt")
    again = call("read_file", "c2", path="a.txt")
    messages = [
        user("first"),
        assistant("", (read,)),
        tool_result(read, "a"),
        user("second"),
        assistant("", (again,)),
        tool_result(again, "a"),
    ]
    notes = [row.text for row in history_rows(messages) if isinstance(row, NoticeRow)]
    assert notes == [UNANSWERED_TURN_NOTE, UNANSWERED_NOTICE]


def test_a_plain_answer_ends_a_turn_without_a_note() -> None:
    rows = history_rows([user("hi"), assistant("Hello.")])
    assert described(rows) == ["user hi", "answer Hello."]


def test_an_answer_the_user_cut_off_shows_its_text_and_interrupted() -> None:
    partial = Message(
        role="assistant", content=f"Half an answer\n\n{INTERRUPTED_NOTE}", meta={"partial": True}
    )
    rows = history_rows([user("explain"), partial])
    assert described(rows) == [
        "user explain",
        "answer Half an answer",
        f"notice {INTERRUPTED_TURN_NOTE}",
    ]


def test_only_the_call_that_was_running_shows_interrupted_the_rest_never_started() -> None:
    first = call("execute_command", "c1", command="sleep 100")
    second = call("write_file", "c2", path="b.txt", content="x")
    messages = [
        user("run"),
        assistant("", (first, second)),
        cancelled_result(first),
        cancelled_result(second),
    ]
    assert described(history_rows(messages)) == [
        "user run",
        "tool execute_command error interrupted",
        f"notice {INTERRUPTED_TURN_NOTE}",
    ]


def test_calls_skipped_after_task_completion_are_not_shown() -> None:
    done = call("task_completion", "c1", result="Done.")
    later = call("read_file", "c2", path="a.txt")
    messages = [
        user("go"),
        assistant("", (done, later)),
        tool_result(done, "Done."),
        cancelled_result(later, SKIPPED_RESULT),
    ]
    assert described(history_rows(messages)) == ["user go", "answer Done."]


def test_a_turn_cut_off_by_a_crash_keeps_its_cancelled_calls_and_one_notice() -> None:
    write = call("write_file", "c1", path="a.txt", content="x")
    conversation = Conversation([user("write"), assistant("", (write,))])
    assert note_cut_off_turn(conversation)
    assert described(history_rows(conversation.messages)) == [
        "user write",
        "tool write_file error cancelled",
        f"notice {CUT_OFF_NOTICE}",
    ]


def test_a_question_shows_as_asked_and_answered_and_the_turn_goes_on() -> None:
    ask = call("ask_question", "c1", question="Which file?")
    done = call("converse", "c2", message="Reading notes.txt.")
    messages = [
        user("check"),
        assistant("", (ask,)),
        tool_result(ask, "notes.txt"),
        assistant("", (done,)),
        tool_result(done, "Reading notes.txt."),
    ]
    assert described(history_rows(messages)) == [
        "user check",
        "notice **Question:** Which file?",
        "user notes.txt",
        "answer Reading notes.txt.",
    ]


def test_a_question_left_open_by_an_interrupt_shows_the_question_and_interrupted() -> None:
    ask = call("ask_question", "c1", question="Which file?")
    messages = [user("check"), assistant("", (ask,)), cancelled_result(ask)]
    assert described(history_rows(messages)) == [
        "user check",
        "notice **Question:** Which file?",
        f"notice {INTERRUPTED_TURN_NOTE}",
    ]


def test_a_failed_loop_breaking_call_is_a_tool_row() -> None:
    done = call("task_completion", "c1")
    failed = tool_result(done, "missing argument: result").evolve(
        meta={"is_error": True, "exit_code": None}
    )
    rows = history_rows([user("go"), assistant("", (done,)), failed])
    assert described(rows)[1] == "tool task_completion error failed"


def test_the_first_screen_takes_as_many_rows_as_fill_it() -> None:
    read = call("read_file", "c1", path="a.txt")
    tool_rows = [ToolRow(read, "ok", "done", "") for _ in range(50)]
    answer = AnswerRow("line\n" * 5)
    rows = [*tool_rows, answer]
    assert estimated_lines(answer, 80) == 6 + 2
    assert rows_to_fill(rows, 30, 80) == 1 + 22
    assert rows_to_fill(rows[:3], 30, 80) == 3


def test_a_users_own_command_is_its_command_row_with_its_exit_code() -> None:
    from forge.agent.input.shell_escape import observation

    rows = history_rows(
        [
            observation("make", "built\n[exit code 2]"),
            observation(
                "sleep 99",
                "(no output)\n[timed out after 5 seconds; the command and "
                "everything it started were killed (exit code -9)]",
            ),
        ]
    )
    assert described(rows) == ["tool ! error exit 2", "tool ! error exit -9"]
    first = rows[0]
    assert isinstance(first, ToolRow) and first.output == "built\n[exit code 2]"
    assert first.call.parsed_arguments() == {"command": "make"}
