"""The work ledger (issue 37, ADR 0050): built from the session's own tool calls, golden text
for a session with edits, failing and passing tests and a reverted change, bounded by its
share of the budget with the oldest entries aggregated first."""

from __future__ import annotations

import json
import re

from forge.context.ledger_render import render_ledger
from forge.context.work_ledger import WorkLedger
from forge.llm.messages import Message, ToolCall, assistant, tool_result
from tests.context.builders import counter

_ids = iter(range(1, 10_000))


def call(name: str, result: str, **arguments: object) -> list[Message]:
    made = ToolCall(f"call_{next(_ids)}", name, json.dumps(arguments))
    return [assistant(tool_calls=(made,)), tool_result(made, result)]


def run(command: str, output: str, code: int) -> list[Message]:
    return call("execute_command", f"{output}\n[exit code {code}]", command=command)


FAILING = "tests/test_dates.py F.\nE   ValueError: bad week '2024-W05'\n1 failed, 1 passed in 0.1s"
SESSION = [
    *call("read_file", "1: import datetime\n", path="src/dates.py"),
    *call("read_file", "1: def test_week():\n", path="tests/test_dates.py"),
    *run("pytest -q", FAILING, 1),
    *call(
        "apply_diff",
        "applied 1 edit to src/dates.py (+2 -1)",
        path="src/dates.py",
        blocks=[{"search": "FORMAT = 'a'", "replace": "FORMAT = 'b'\nWEEK = 'W'"}],
    ),
    *run("pytest -q", FAILING, 1),
    *call(
        "apply_diff",
        "applied 1 edit to src/dates.py (+1 -2)",
        path="src/dates.py",
        blocks=[{"search": "FORMAT = 'b'\nWEEK = 'W'", "replace": "FORMAT = 'a'"}],
    ),
    *call(
        "write_file",
        "created src/weeks.py (3 lines; +3 -0)",
        path="src/weeks.py",
        content="def week(text):\n    return int(text[6:])\n\n",
    ),
    *run("pytest -q", "..\n2 passed in 0.1s", 0),
    *run("ruff check src", "All checks passed!", 0),
]


def ledger_of(messages: list[Message]) -> WorkLedger:
    ledger = WorkLedger()
    results = {m.tool_call_id: m for m in messages if m.role == "tool"}
    for message in messages:
        for made in message.tool_calls:
            ledger.record(made, results[made.id])
    return ledger


def keys(messages: list[Message]) -> list[str]:
    return [m.id[:6] for m in messages if m.role == "tool" and "exit code" in m.content]


def test_golden_a_session_with_edits_failing_and_passing_tests_and_a_reverted_change() -> None:
    ledger = ledger_of(SESSION)
    k = keys(SESSION)
    assert render_ledger(ledger, 10_000, counter().count_text) == "\n".join(
        [
            "[Work ledger: what this session did, from its tool calls]",
            "Files changed:",
            "- src/dates.py (edited 2x, +3 -3, reverted)",
            "- src/weeks.py (created, +3 -0)",
            "Files read: tests/test_dates.py",
            "Commands (exit code; recall key of the output):",
            f"- `pytest -q` (exit 1, tests failed: 1 failed, 1 passed in 0.1s; recall {k[0]})",
            f"- `pytest -q` (exit 1, tests failed: 1 failed, 1 passed in 0.1s; recall {k[1]})",
            f"- `pytest -q` (exit 0, tests passed: 2 passed in 0.1s; recall {k[2]})",
            f"- `ruff check src` (exit 0; recall {k[3]})",
            "Errors met:",
            "- E ValueError: bad week '2024-W05' (`pytest -q`)",
            "Abandoned: change to src/dates.py reverted (an edit undone)",
        ]
    )


def test_a_command_that_kept_failing_is_abandoned_until_it_succeeds() -> None:
    failing = run("make build", "error: missing header", 2)
    messages = [*run("make build", "error: missing header", 2), *run("make build", "error: x", 2)]
    ledger = ledger_of(messages)
    assert ledger.abandoned == ["`make build` kept failing (2 runs, last exit 2)"]
    assert ledger.errors == ["error: missing header (`make build`)", "error: x (`make build`)"]
    ledger = ledger_of([*messages, *run("make build", "ok", 0), *failing])
    assert ledger.abandoned == []


def test_a_file_rewritten_to_an_earlier_version_and_git_checkout_are_reverts() -> None:
    messages = [
        *call("write_file", "created a.py (1 lines; +1 -0)", path="a.py", content="x = 1\n"),
        *call("write_file", "updated a.py (1 lines; +1 -1)", path="a.py", content="x = 2\n"),
        *call("write_file", "updated a.py (1 lines; +1 -1)", path="a.py", content="x = 1\n"),
        *call("write_file", "created b.py (1 lines; +1 -0)", path="src/b.py", content="y\n"),
        *run("git checkout -- src/b.py", "", 0),
        *run("rm -f old.txt", "", 0),
    ]
    ledger = ledger_of(messages)
    assert ledger.files["a.py"].reverted and ledger.files["src/b.py"].reverted
    assert ledger.files["old.txt"].deleted
    assert ledger.abandoned == [
        "change to a.py reverted (rewritten to an earlier version)",
        "changes reverted by `git checkout -- src/b.py`",
    ]


def test_the_ledger_round_trips_through_meta() -> None:
    ledger = ledger_of(SESSION)
    again = WorkLedger.from_meta(json.loads(json.dumps(ledger.to_meta())))
    count = counter().count_text
    assert render_ledger(again, 10_000, count) == render_ledger(ledger, 10_000, count)
    assert again.calls == ledger.calls


def test_a_long_session_is_aggregated_oldest_first_within_its_limit() -> None:
    messages: list[Message] = []
    for n in range(60):
        messages += call(
            "write_file", f"created src/m{n}.py (1 lines; +1 -0)", path=f"src/m{n}.py",
            content="x\n",
        )  # fmt: skip
        messages += run(f"pytest tests/test_m{n}.py", "1 passed", 0)
    messages += run("pytest -q", "E   AssertionError: m59\n1 failed, 59 passed", 1)
    count = counter().count_text
    text = render_ledger(ledger_of(messages), 400, count)
    assert count(text) <= 400
    aggregated = re.search(r"src/: (\d+) files changed \((\d+) created", text)
    assert aggregated and aggregated[1] == aggregated[2]  # the oldest, by directory
    assert "src/m59.py (created, +1 -0)" in text  # the newest in full
    assert "`pytest -q` (exit 1, tests failed: 1 failed, 59 passed" in text  # the last run
    assert "AssertionError: m59" in text  # the last error


def test_switching_branches_is_not_a_revert() -> None:
    ledger = ledger_of([*run("git checkout -b fix", "", 0), *run("git checkout main", "", 0)])
    assert ledger.abandoned == []
    ledger = ledger_of(run("git checkout HEAD -- a.py", "", 0))
    assert ledger.abandoned == ["changes reverted by `git checkout HEAD -- a.py`"]


def test_files_a_shell_command_writes_are_changed_files() -> None:
    """Agents edit with the shell as often as with an editing tool: a redirection, `tee`,
    `sed -i`, `touch` and the target of `mv`/`cp` change a file; a heredoc's body is data, and
    a failed command changed nothing."""
    heredoc = "cat > tests/missing_colon.py << 'EOF'\nif a > b.value:\n    pass\nEOF"
    messages = [
        *run(heredoc, "", 0),
        *run("sed -i 's/a/b/' src/dates.py && echo done > /dev/null 2>&1", "done", 0),
        *run("sed -i 's/-> float/-> float:/' src/dates.py", "", 0),
        *run("sed -i.bak -e 's/x/y/' lib/one.c lib/two.c", "", 0),
        *run("python gen.py | tee out/report.txt", "ok", 0),
        *run("touch notes.md; mv build/a.out bin/tool.exe", "", 0),
        *run("python -c 'print(1 > 0.5)'", "True", 0),
        *run("sed -i 's/a/b/' missing.py", "sed: can't read missing.py", 2),
    ]
    changed = [path for path, record in ledger_of(messages).files.items() if record.changed]
    assert changed == [
        "tests/missing_colon.py",
        "src/dates.py",
        "lib/one.c",
        "lib/two.c",
        "out/report.txt",
        "notes.md",
        "bin/tool.exe",
    ]


TRACEBACK = "Traceback (most recent call last):\nKeyError: 'x'"


def test_an_error_a_pipe_hid_or_no_exit_code_stated_is_still_an_error_met() -> None:
    """The shell says "No such file or directory" anywhere in a line, and a long line keeps
    those words; an output whose exit code is 0 or unknown adds an error only when a line
    plainly is one."""
    far = "ls: cannot access '/workspace/" + "deep/" * 30 + "src/lib': No such file or directory"
    messages = [
        *call("execute_command", far, command="ls /workspace/deep/src/lib"),
        *run(
            "python run.py 2>&1 | tail -3", "Traceback (most recent call last):\nKeyError: 'x'", 0
        ),
        *run("grep -rn 'raise ValueError' src", "src/a.py:3: raise ValueError('x')", 0),
        *run("echo fine", "fine", 0),
    ]
    errors = ledger_of(messages).errors
    assert len(errors) == 2
    assert "No such file or directory" in errors[0] and len(errors[0]) < 200
    assert errors[1] == "KeyError: 'x' (`python run.py 2>&1 | tail -3`)"
