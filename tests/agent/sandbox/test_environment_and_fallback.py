"""What holds without bubblewrap: the model's commands lose every provider key and
`tools.hide_env` (issue 34) while the user's `!` commands keep today's environment; a missing
bubblewrap is said plainly, `mode: on` refuses, `auto` runs the command unconfined."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.agent.events import ToolCallFinished
from forge.agent.input.shell_escape import run_shell_escape
from forge.config.settings import Settings
from forge.config.store import load_settings
from tests.agent.sandbox.support import make_sandbox, run_model_command

KEY = "sk-environment-canary-81d2"
NO_BWRAP = "forge-test-no-such-bwrap"


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "FORGE_LLM__API_KEY",
        "FORGE_LLM__SUMMARIZATION_API_KEY",
        "DEPLOY_TOKEN",
        "CLOUD_SECRET_A",
    ):
        monkeypatch.setenv(name, f"{KEY}-{name}")
    monkeypatch.setenv("ORDINARY", "ordinary-value")


@pytest.mark.usefixtures("keys")
async def test_an_unconfined_model_command_sees_no_provider_key_nor_hidden_names(
    workspace: Path,
) -> None:
    sandbox = make_sandbox(workspace, mode="off", hide_env=["DEPLOY_TOKEN", "CLOUD_*"])
    result = await run_model_command(sandbox, workspace, "env")
    assert not sandbox.state().enabled
    assert "ordinary-value" in result.content
    assert KEY not in result.content
    assert "PAGER=cat" in result.content


@pytest.mark.usefixtures("keys")
async def test_the_users_bang_command_keeps_todays_environment(workspace: Path) -> None:
    finished = [
        event
        async for event in run_shell_escape("env", workspace, command_timeout=30)
        if isinstance(event, ToolCallFinished)
    ]
    output = finished[0].result
    assert f"{KEY}-ANTHROPIC_API_KEY" in output
    assert f"{KEY}-DEPLOY_TOKEN" in output
    assert f"{KEY}-OPENAI_API_KEY" not in output  # as before the sandbox
    assert "FORGE_LLM__API_KEY" not in output


async def test_without_bubblewrap_auto_says_why_and_runs_unconfined(workspace: Path) -> None:
    sandbox = make_sandbox(workspace, program=NO_BWRAP)
    state = sandbox.state()
    assert (state.enabled, state.mechanism, state.network) == (False, "none", True)
    assert "bubblewrap is not installed" in state.reason
    assert state.record() == {"enabled": False, "mechanism": "none", "network": True}
    result = await run_model_command(sandbox, workspace, "echo ran > out.txt")
    assert result.exit_code == 0
    assert (workspace / "out.txt").read_text() == "ran\n"


async def test_mode_on_without_bubblewrap_refuses_the_command_readably(workspace: Path) -> None:
    sandbox = make_sandbox(workspace, program=NO_BWRAP, mode=True)  # YAML's `on`
    assert sandbox.settings.mode == "on"
    assert sandbox.state().refuses
    result = await run_model_command(sandbox, workspace, "echo ran > out.txt")
    assert result.is_error
    assert "tools.sandbox.mode is on" in result.content
    assert "bubblewrap is not installed" in result.content
    assert not (workspace / "out.txt").exists()


@pytest.mark.parametrize(
    ("written", "mode"), [("on", "on"), ("off", "off"), ("true", "on"), ("auto", "auto")]
)
def test_yaml_on_and_off_are_the_sandbox_modes(tmp_path: Path, written: str, mode: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"tools:\n  sandbox:\n    mode: {written}\n")
    result = load_settings(path)
    assert result.error is None
    assert result.settings.tools.sandbox.mode == mode


def test_no_configuration_at_all_confines_by_default() -> None:
    assert Settings().tools.sandbox.mode == "auto"
    assert Settings().tools.sandbox.network is False
