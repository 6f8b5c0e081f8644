"""ask_question, converse, task_completion: specs for the model, arguments echoed for the loop."""

from __future__ import annotations

from pathlib import Path

from tests.agent.tools.support import call_tool


async def test_ask_question_echoes_question_and_suggestions(workspace: Path) -> None:
    result = await call_tool(
        "ask_question",
        workspace,
        question="Which database?",
        suggestions=["SQLite", " ", "Postgres"],
    )
    assert not result.is_error
    assert result.content == "Which database?"
    assert result.metadata == {"question": "Which database?", "suggestions": ["SQLite", "Postgres"]}


async def test_ask_question_without_suggestions(workspace: Path) -> None:
    result = await call_tool("ask_question", workspace, question="Go on?")
    assert result.metadata["suggestions"] == []


async def test_converse_and_task_completion_echo_their_text(workspace: Path) -> None:
    converse = await call_tool("converse", workspace, message="Hello!")
    done = await call_tool("task_completion", workspace, result="Fixed the bug.")
    assert (converse.content, converse.metadata) == ("Hello!", {"message": "Hello!"})
    assert (done.content, done.metadata) == ("Fixed the bug.", {"result": "Fixed the bug."})


async def test_empty_or_missing_text_is_an_error(workspace: Path) -> None:
    blank = await call_tool("task_completion", workspace, result="  ")
    missing = await call_tool("ask_question", workspace)
    bad_suggestions = await call_tool("ask_question", workspace, question="q", suggestions=[1])
    assert blank.is_error and "'result' must be non-empty text" in blank.content
    assert missing.is_error and "missing required argument 'question'" in missing.content
    assert bad_suggestions.is_error and "'suggestions[0]' must be a string" in (
        bad_suggestions.content
    )
