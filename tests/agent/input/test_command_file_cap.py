"""Custom command files above `commands.max_file_bytes` are refused by name, never sent
(issue 20, docs/adr/0036): real files, and `forge run` as a real subprocess."""

from __future__ import annotations

from pathlib import Path

from forge.agent.input.custom_commands import MAX_FILE_BYTES, load_custom_commands
from tests.headless.test_headless import forge_run
from tests.headless.test_headless_custom_commands import write
from tests.support.openai_server import OpenAIServer, Text


def test_a_command_file_above_the_cap_is_refused_by_name(tmp_path: Path) -> None:
    project = tmp_path / ".forge" / "commands"
    huge = write(project / "huge.md", "Do this. " + "x" * MAX_FILE_BYTES)
    write(project / "small.md", "Small one.")
    exact = write(project / "exact.md", "y" * 1000)

    loaded = load_custom_commands(tmp_path, user_dir=tmp_path / "none")
    assert set(loaded.commands) == {"small", "exact"}
    (problem,) = loaded.problems
    assert problem.startswith(f"{huge}: larger than 262,144 bytes (commands.max_file_bytes)")

    lowered = load_custom_commands(tmp_path, user_dir=tmp_path / "none", max_file_bytes=999)
    assert set(lowered.commands) == {"small"}
    assert any(
        problem.startswith(f"{exact}: larger than 999 bytes") for problem in lowered.problems
    )


def test_forge_run_refuses_a_10_mb_command_and_sends_the_text_as_typed(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    huge = write(workspace / ".forge" / "commands" / "huge.md", "z" * 10_000_000)
    llm_server.enqueue(Text("No such command here."))
    result = forge_run(llm_server, workspace, "/huge please")
    assert result.returncode == 0, result.stderr
    assert f"custom command not loaded: {huge}: larger than 262,144 bytes" in result.stderr
    (request,) = llm_server.requests
    assert request.messages[-1]["content"] == "/huge please"
    assert len(request.text()) < 100_000


def test_the_cap_is_a_setting(llm_server: OpenAIServer, workspace: Path) -> None:
    write(workspace / ".forge" / "commands" / "mid.md", "Mid: " + "w" * 300_000)
    llm_server.enqueue(Text("ok"))
    result = forge_run(
        llm_server, workspace, "/mid", env={"FORGE_COMMANDS__MAX_FILE_BYTES": "1000000"}
    )
    assert result.returncode == 0, result.stderr
    assert llm_server.requests[0].messages[-1]["content"].startswith("Mid: www")
