"""Recall by query (issue 37, ADR 0050): an output whose key scrolled away is found by the words
the agent remembers of it — exact words or a regular expression over this session's outputs
and summaries, verbatim spans with their recall keys, bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge.agent.history.recall_archive import SessionArchive
from forge.agent.history.session_file import SessionStore
from forge.agent.tools.base import ToolContext, ToolError
from forge.agent.tools.recall import RecallArgs, RecallTool
from forge.context.conversation import Conversation
from forge.context.recall_search import MAX_CHARACTERS, MAX_SPANS
from forge.llm.messages import Message, MessageKind, ToolCall, assistant, system, tool_result, user

TRACEBACK = "\n".join(
    [
        "collected 12 items",
        "tests/test_dates.py ..F",
        "Traceback (most recent call last):",
        '  File "src/dates.py", line 41, in parse_date',
        "    return datetime.strptime(text, FORMAT)",
        "ValueError: time data '2024-W05' does not match format '%Y-%m-%d'",
        "1 failed, 11 passed",
        "[exit code 1]",
    ]
)


def session(tmp_path: Path, *outputs: str) -> tuple[Conversation, RecallTool, list[Message]]:
    log = SessionStore(tmp_path / "sessions").create(tmp_path, "m")
    chat = Conversation()
    log.attach(chat)
    chat.append(system("s"))
    chat.append(user("fix the dates"))
    results: list[Message] = []
    for number, output in enumerate(outputs):
        call = ToolCall(f"c{number}", "execute_command", json.dumps({"command": "pytest -q"}))
        chat.append(assistant(tool_calls=(call,)))
        results.append(tool_result(call, output))
        chat.append(results[-1])
    return chat, RecallTool(SessionArchive(log.path)), results


async def recall(tool: RecallTool, **arguments: object) -> str:
    args = RecallArgs.model_validate(arguments)
    return (await tool.run(args, ToolContext(workspace=Path.cwd()))).content


async def test_exact_words_find_the_lines_verbatim_with_the_key(tmp_path: Path) -> None:
    _, tool, results = session(tmp_path, "all good\n[exit code 0]", TRACEBACK)
    found = await recall(tool, query="does  not MATCH format")  # any case, any whitespace
    key = results[1].id[:6]
    assert found.startswith(f"--- recall {key}, lines 4-8 ---\n")
    assert "\n".join(TRACEBACK.splitlines()[3:8]) in found  # two lines either side, verbatim
    assert results[0].id[:6] not in found
    # The key it names brings the whole original back.
    assert await recall(tool, id=key) == TRACEBACK


async def test_a_regular_expression_searches_outputs_and_summaries(tmp_path: Path) -> None:
    chat, tool, results = session(tmp_path, TRACEBACK)
    summary = Message(
        role="assistant",
        content="[Summary of my earlier work]\nparse_date fails on ISO week dates",
        kind=MessageKind.SUMMARY,
        replaces=(results[0].id,),
    )
    chat.replace_range(2, 4, [summary])
    found = await recall(tool, query=r"parse_\w+ fails|line \d+, in parse_\w+", regex=True)
    assert f"recall {results[0].id[:6]}, lines 2-6" in found
    assert f"recall {summary.id[:6]}, lines 1-2" in found
    # Newest first: the summary came after the output it folded.
    assert found.index(summary.id[:6]) < found.index(results[0].id[:6])
    assert "fix the dates" not in await recall(tool, query="dates")  # instructions: not searched


async def test_answers_are_bounded_and_say_what_was_left_out(tmp_path: Path) -> None:
    long_output = "\n".join(f"line {n}: needle {'x' * 200}" for n in range(0, 400, 10))
    _, tool, _ = session(tmp_path, *([long_output] * 3))
    found = await recall(tool, query="needle")
    assert found.count("--- recall ") <= MAX_SPANS
    assert len(found) < MAX_CHARACTERS + 2000
    assert "more matching spans left out: narrow the query" in found
    assert found.startswith("--- recall ") and "line 0: needle" in found  # a long span is cut


async def test_no_match_and_a_bad_expression_are_clear(tmp_path: Path) -> None:
    _, tool, _ = session(tmp_path, TRACEBACK)
    assert "no earlier output or summary matches 'segfault'" in await recall(tool, query="segfault")
    with pytest.raises(ToolError, match="not a valid regular expression"):
        await recall(tool, query="(unclosed", regex=True)
    assert tool.describe({"query": "parse  date"}) == "recall: “parse date”"
