"""The resume benchmark's pieces (bench/resume.py): the long session it writes and the table
it reports; the launches themselves run in `make bench`."""

from __future__ import annotations

from pathlib import Path

from bench.resume import (
    ANSWER_MARK,
    TARGET_RATIO,
    resume_table,
    session_messages,
    write_long_session,
)
from forge.agent.history.session_file import SessionStore
from forge.context.conversation import find_problems
from forge.tui.history import AnswerRow, ToolRow, history_rows


def test_the_long_session_is_valid_and_ends_in_its_marked_answer(tmp_path: Path) -> None:
    messages = session_messages(5)
    assert not find_problems(messages)
    session_id = write_long_session(tmp_path / "sessions", tmp_path, "gpt-4o", 5)
    resumed = SessionStore(tmp_path / "sessions").load(session_id)
    rows = history_rows(resumed.messages)
    assert sum(isinstance(row, ToolRow) for row in rows) == 5
    assert isinstance(rows[-1], AnswerRow) and ANSWER_MARK in rows[-1].text


def test_the_table_gives_ratios_to_a_new_session_and_flags_a_slow_resume() -> None:
    table, violations = resume_table(
        [1.0, 1.2, 1.1], {300: [1.2, 1.3, 1.25], 3000: [2.0, 2.1, 1.9]}
    )
    assert [row[2] for row in table.rows] == ["1.00x", "1.14x", "1.82x"]
    assert len(violations) == 1 and "3,000 rounds" in violations[0]
    assert f"{TARGET_RATIO}x" in violations[0]
