"""The deterministic ledger built from tool calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge.agent.tools.base import ToolContext
from forge.agent.tools.execute_command import ExecuteCommandArgs, ExecuteCommandTool
from forge.context.ledger import Ledger, build_ledger, collect_ledger, exit_code_in
from forge.llm.messages import Message, MessageKind, ToolCall, assistant, tool_result
from tests.conftest import CORPUS


def _pair(name: str, arguments: dict[str, object] | str, output: str) -> list[Message]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = ToolCall(id=f"id-{name}-{len(output)}-{text[:8]}", name=name, arguments=text)
    return [assistant("", (call,)), tool_result(call, output)]


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ("all good\n[exit code 0]", 0),
        ("exit code: 2", 2),
        ("Exit Code = 127\n", 127),
        ("[Command finished with exit code 1]", 1),
        ("exit_code: -9", -9),
        ("process exit status 3", 3),
        ("exit code 1 then retried\nexit code 0", 0),
        ("no code here", None),
    ],
)
def test_exit_codes_are_read_leniently(output: str, code: int | None) -> None:
    assert exit_code_in(output) == code


def test_files_read_changed_and_commands_with_exit_codes() -> None:
    messages = [
        *_pair("read_file", {"path": "src/app.py"}, "def main(): ..."),
        *_pair("write_file", {"path": "src/new.py", "content": "x = 1"}, "wrote 5 bytes"),
        *_pair("apply_diff", {"path": "src/app.py", "blocks": []}, "applied"),
        *_pair("execute_command", {"command": "pytest -q"}, "1 failed\n[exit code 1]"),
        *_pair("execute_command", {"command": "ls"}, "no status line"),
        *_pair("list_files", {"path": "."}, "a\nb"),
        *_pair("read_file", {"path": "src/app.py"}, "again"),
    ]
    ledger = build_ledger(messages)
    assert ledger.files_read == ["src/app.py"]
    assert ledger.files_changed == ["src/new.py", "src/app.py"]
    assert [(c.command, c.exit_code) for c in ledger.commands] == [("pytest -q", 1), ("ls", None)]
    rendered = ledger.render()
    assert "files read: src/app.py" in rendered
    assert "`pytest -q` (exit 1)" in rendered
    assert "`ls` (exit code unknown)" in rendered


def test_editor_tools_are_read_or_change_by_their_command() -> None:
    messages = [
        *_pair("str_replace_editor", {"command": "view", "path": "/w/a.c"}, "..."),
        *_pair("str_replace_editor", {"command": "str_replace", "path": "/w/b.c"}, "ok"),
    ]
    ledger = build_ledger(messages)
    assert ledger.files_read == ["/w/a.c"]
    assert ledger.files_changed == ["/w/b.c"]


def test_invalid_arguments_are_skipped_not_fatal() -> None:
    ledger = build_ledger(_pair("read_file", "{not json", "content"))
    assert ledger.is_empty()
    assert ledger.render() == ""


def test_ledgers_of_earlier_summaries_carry_over() -> None:
    earlier = build_ledger(_pair("execute_command", {"command": "make"}, "exit code: 0"))
    summary = Message(
        role="assistant",
        content="summary",
        kind=MessageKind.SUMMARY,
        meta={"ledger": earlier.to_meta()},
    )
    later = _pair("read_file", {"path": "README.md"}, "# readme")
    ledger = collect_ledger([summary, *later])
    assert [c.command for c in ledger.commands] == ["make"]
    assert ledger.files_read == ["README.md"]
    assert Ledger.from_meta({"commands": [["x", "bad"], "junk"]}).commands[0].exit_code is None


def test_real_openhands_trajectory_yields_its_commands_and_files() -> None:
    path = (
        CORPUS
        / "trajectories"
        / "openhands__multi_swe_bench_examples_output__ponylang__ponyc-4593.messages.json"
    )
    if not path.exists():
        pytest.skip("corpus not available")
    records = json.loads(Path(path).read_text())
    messages = []
    for record in records:
        calls = tuple(
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in record.get("tool_calls") or ()
        )
        messages.append(
            Message(
                role=record["role"],
                content=record.get("content") or "",
                tool_calls=calls,
                tool_call_id=record.get("tool_call_id"),
                name=record.get("name"),
            )
        )
    ledger = build_ledger(messages)
    assert len(ledger.commands) >= 10
    assert any(c.command.startswith("ls") for c in ledger.commands)
    assert ledger.files_read or ledger.files_changed


async def _real_command_result(workspace: Path, command: str, limit_seconds: float = 30) -> str:
    """What the agent's own `execute_command` tool returns for `command` (a real subprocess)."""
    result = await ExecuteCommandTool().run(
        ExecuteCommandArgs(command=command, timeout=limit_seconds), ToolContext(workspace=workspace)
    )
    return result.content


async def test_the_exit_code_comes_from_execute_commands_real_status_line(
    workspace: Path,
) -> None:
    # The command prints a misleading "exit code 7" itself; the tool's last line is the truth.
    output = await _real_command_result(workspace, "echo 'exit code 7'; echo done; exit 3")
    assert output.endswith("[exit code 3]")
    call = ToolCall("run-1", "execute_command", json.dumps({"command": "make test"}))
    ledger = build_ledger([assistant("", (call,)), tool_result(call, output)])
    assert [(c.command, c.exit_code) for c in ledger.commands] == [("make test", 3)]
    assert "`make test` (exit 3)" in ledger.render()


async def test_a_timed_out_command_records_the_signal_exit_code(workspace: Path) -> None:
    output = await _real_command_result(workspace, "sleep 5", limit_seconds=0.2)
    assert "timed out" in output
    call = ToolCall("run-2", "execute_command", json.dumps({"command": "sleep 5"}))
    ledger = build_ledger([assistant("", (call,)), tool_result(call, output)])
    assert ledger.commands[0].exit_code is not None and ledger.commands[0].exit_code < 0


def test_the_exit_code_the_agent_keeps_in_meta_wins_over_the_text() -> None:
    call = ToolCall("run-3", "execute_command", json.dumps({"command": "pytest"}))
    # the agent's result message: text whose head/tail cut lost the status, exact code in meta
    result = tool_result(call, "...output cut...").evolve(meta={"exit_code": 1, "is_error": True})
    ledger = build_ledger([assistant("", (call,)), result])
    assert ledger.commands[0].exit_code == 1
