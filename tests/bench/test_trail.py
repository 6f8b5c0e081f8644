"""The work-trail probes: what was done, taken from the session's own calls, and when a request
answers each."""

from __future__ import annotations

import json

from bench.fidelity import FidelityTracker
from bench.sessions import annotate
from bench.trail import TrailBuilder, aggregate_lines, exit_code, probes, run_outcome
from forge.llm.messages import Message, ToolCall


def _call(call_id: str, name: str, **arguments: str) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=json.dumps(arguments))


def _structured() -> list[Message]:
    write = _call("w1", "write_file", path="src/app/a.py", content="x = 1\n")
    test = _call("t1", "execute_command", command="python -m pytest tests -q")
    edit = _call("e1", "str_replace_editor", command="str_replace", path="/repo/src/app/b.py")
    view = _call("v1", "str_replace_editor", command="view", path="/repo/src/app/c.py")
    listing = _call("l1", "execute_command", command="ls src")
    return [
        Message(role="system", content="sys"),
        Message(role="user", content="Fix the app."),
        Message(role="assistant", content="Writing.", tool_calls=(write,)),
        Message(role="tool", content="wrote 1 line", tool_call_id="w1"),
        Message(role="assistant", content="Testing.", tool_calls=(test,)),
        Message(
            role="tool",
            content="E   AssertionError: expected 2, got 1\n1 failed, 2 passed in 0.1s\n"
            "[exit code 1]",
            tool_call_id="t1",
        ),
        Message(role="assistant", content="Editing.", tool_calls=(edit, view)),
        Message(role="tool", content="edited", tool_call_id="e1"),
        Message(role="tool", content="1: y = 2", tool_call_id="v1"),
        Message(role="assistant", content="Listing.", tool_calls=(listing,)),
        Message(role="tool", content="a.py b.py\n[exit code 0]", tool_call_id="l1"),
        Message(role="assistant", content="Done."),
    ]


def _check(text: str) -> dict[str, bool]:
    session = annotate("s", _structured())
    state = TrailBuilder(session).advance(len(session.messages))
    return {probe.label: probe.check(text, aggregate_lines(text)) for probe in probes(state)}


def test_probes_come_from_the_sessions_own_calls_and_outputs() -> None:
    session = annotate("s", _structured())
    state = TrailBuilder(session).advance(len(session.messages))
    assert list(state.files) == ["src/app/a.py", "/repo/src/app/b.py"]  # a view changes nothing
    assert state.command is not None and (state.command.text, state.command.exit_code) == (
        "ls src",
        0,
    )
    assert state.test is not None
    assert (state.test.text, state.test.passed, state.test.counts) == (
        "python -m pytest tests -q",
        False,
        "1 failed, 2 passed",
    )
    assert state.error == ("AssertionError: expected 2, got 1", 5)
    assert [probe.kind for probe in probes(state)] == ["file", "file", "command", "test", "error"]


def test_a_ledger_that_says_what_was_done_answers_every_probe() -> None:
    ledger = (
        "Work so far:\n"
        "- edited src/app/a.py (+1), src/app/b.py (+1 -1)\n"
        "- `python -m pytest tests -q`: 1 failed, 2 passed\n"
        "- `ls src` exit 0\n"
        "- error: AssertionError: expected 2, got 1\n"
    )
    assert all(_check(ledger).values())


def test_missing_facts_miss_their_probes() -> None:
    found = _check("edited app/a.py\n`ls src` (ran)\npython -m pytest tests -q passed\n")
    assert found == {
        "src/app/a.py": True,
        "/repo/src/app/b.py": False,
        "ls src": False,  # no exit code on its line
        "python -m pytest tests -q": False,  # the wrong outcome
        "AssertionError: expected 2, got 1": False,
    }


def test_an_aggregate_answers_for_every_file_under_its_directory() -> None:
    found = _check("app/: 2 files edited\n")
    assert found["src/app/a.py"] and found["/repo/src/app/b.py"]
    assert not _check("docs/: 2 files edited\n")["src/app/a.py"]


def test_text_actions_open_files_and_aider_edits_count() -> None:
    edit = "Editing.\n```\nedit 3:4\n    return 2\nend_of_edit\n```"
    messages = [
        Message(role="user", content="Fix it."),
        Message(role="assistant", content="Creating.\n```\ncreate reproduce.py\n```"),
        Message(role="user", content="[File: /r/reproduce.py]\n(Open file: /r/reproduce.py)"),
        Message(role="assistant", content="Opening.\n```\nopen src/x.py\n```"),
        Message(role="user", content="[File: /r/src/x.py]\n(Open file: /r/src/x.py)"),
        Message(role="assistant", content=edit),
        Message(role="user", content="File updated.\n(Open file: /r/src/x.py)"),
        Message(role="assistant", content="Running.\n```\npython reproduce.py\n```"),
        Message(role="user", content="Traceback (most recent call last):\nValueError: bad\n"),
        Message(role="assistant", content="Applying."),
        Message(role="user", content="Applied edit to tests/test_x.py\nCommit 04fff71"),
        Message(role="assistant", content="Open it again.\n```\nopen reproduce.py\n```"),
        Message(role="user", content="[File: /r/reproduce.py]\n(Open file: /r/reproduce.py)"),
        Message(role="assistant", content="Editing.\n```\nedit 1:1\nprint(1)\nend_of_edit\n```"),
        Message(role="user", content="File updated.\n(Open file: /r/reproduce.py)"),
    ]
    session = annotate("text", messages)
    state = TrailBuilder(session).advance(len(messages))
    # One probe per file: the open file /r/reproduce.py is the reproduce.py created first.
    assert list(state.files) == ["/r/src/x.py", "tests/test_x.py", "reproduce.py"]
    assert state.command is not None and state.command.text == "edit 1:1"
    assert state.error == ("ValueError: bad", 8)


def test_exit_codes_and_test_outcomes_are_read_from_each_agents_output() -> None:
    assert exit_code("<returncode>2</returncode>\n<output>x</output>") == 2
    assert exit_code("[Command finished with exit code 0]") == 0
    assert exit_code("no code here") is None
    assert run_outcome("..\nOK\n", None) == (True, "")
    assert run_outcome("FAILED (failures=1)\n", None) == (False, "")
    assert run_outcome("=== 3 passed in 0.2s ===", None) == (True, "3 passed")


def test_the_tracker_probes_only_after_the_first_compaction() -> None:
    session = annotate("s", _structured())
    messages = session.messages
    tracker = FidelityTracker(session, set())
    tracker.observe(4, messages[:4])  # nothing removed yet
    assert tracker.result.trail_probes_total == 0
    masked = messages[3].evolve(content="[omitted]")
    # Before message 11: the write's call stays (its path is there), the test run is verbatim,
    # the listing's output was masked so its exit code is gone.
    listing = messages[10].evolve(content="[omitted]")
    tracker.observe(11, [*messages[:3], masked, *messages[4:10], listing])
    assert tracker.compacted
    assert (tracker.result.trail_probes_hit, tracker.result.trail_probes_total) == (4, 5)
