"""Start-up: the first frame needs only Textual and light Forge modules; the config, the
provider (httpx) and the tokenizer load in a worker after it, and input typed meanwhile
waits for them instead of being lost."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from textual.message import Message

from forge.llm.tokenizer import encoding_loaded, forget_encodings
from forge.tui.app import ForgeApp
from forge.tui.messages import SessionLoaded
from forge.tui.widgets.chat_blocks import AssistantBlock, UserMessageBlock
from forge.tui.widgets.prompt_input import PromptInput
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import notices, wait_idle, wait_until

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
HEAVY = ("pydantic_settings", "forge.config.settings", "httpx", "tiktoken", "forge.session.core")


def test_the_module_the_cli_opens_imports_nothing_heavy() -> None:
    # What `forge` does up to the app's first frame: the CLI's own checks, then `run_tui`
    # (replaced here by the probe).
    probe = (
        "import json, sys; import forge.cli, forge.tui.app as app; "
        "app.run_tui = lambda args: print(json.dumps(sorted("
        f"m for m in {HEAVY!r} if m in sys.modules))) or 0; "
        "sys.exit(forge.cli.main(['--workspace', '.']))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


async def test_the_runtime_loads_after_the_first_frame_and_early_input_waits_for_it(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    llm_server.enqueue(Text("hello from the model"))
    app = ForgeApp(workspace=workspace)
    seen: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=seen.append) as pilot:
        # Sent at once, before the start-up worker can have finished.
        app.prompt.post_message(PromptInput.Submitted("are you there?"))
        await wait_until(pilot, lambda: app.inputs_handled == 1, "the early input")
        await wait_idle(pilot)
        assert any(isinstance(m, SessionLoaded) for m in seen)
        assert app.header.model == app.settings.llm.model
        assert [b.text for b in app.chat.query(UserMessageBlock)] == ["are you there?"]
        assert [b.answer_text for b in app.chat.query(AssistantBlock)][-1] == "hello from the model"
        assert any("Type a task" in text for text in notices(app))
    assert "are you there?" in llm_server.requests[0].text()


async def test_ready_comes_before_the_tokenizer_and_a_task_sent_then_runs_once(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    # docs/adr/0042: the tokenizer loads after the session, off the loop; a turn waits for it.
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    llm_server.enqueue(Text("hello from the model"))
    forget_encodings()
    tokenizer_at_ready: list[bool] = []

    def on_message(message: Message) -> None:
        if isinstance(message, SessionLoaded):
            tokenizer_at_ready.append(encoding_loaded("o200k_base"))
            # Sent the moment the session is ready, the tokenizer not yet built.
            app.prompt.post_message(PromptInput.Submitted("count me once"))

    app = ForgeApp(workspace=workspace)
    async with app.run_test(size=(100, 30), message_hook=on_message) as pilot:
        await wait_until(pilot, lambda: app.inputs_handled == 1, "the task")
        await wait_idle(pilot)
        await wait_until(pilot, lambda: app.status.gauge.current_tokens > 0, "the gauge")
        assert tokenizer_at_ready == [False]
        assert [b.text for b in app.chat.query(UserMessageBlock)] == ["count me once"]
        assert [b.answer_text for b in app.chat.query(AssistantBlock)] == ["hello from the model"]
        assert app.status.gauge.current_tokens == app.session.context_manager.current_tokens(
            app.session.agent.conversation
        )
    assert len(llm_server.requests) == 1
    assert "count me once" in llm_server.requests[0].text()


async def test_the_server_is_asked_for_the_context_window_before_any_task(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    # The session is built off the loop, so the app starts the asking once it is ready: the
    # first task does not wait for the answer (docs/adr/0042).
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    app = ForgeApp(workspace=workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        await wait_until(pilot, lambda: bool(llm_server.info_requests), "the window probes")
        assert not llm_server.requests  # no turn was run
        window = app.session.window
        assert window is not None
        await wait_until(pilot, lambda: not window.asking, "the answer")


def test_building_a_session_loads_neither_the_mcp_sdk_jsonschema_nor_the_tokenizer(
    tmp_path: Path,
) -> None:
    # Both load later (an MCP server's connection; the first count), not before a task can be
    # typed (docs/adr/0042).
    probe = (
        "import json, sys, pathlib; from forge.config.settings import Settings; "
        "from forge.session.build import build_session; "
        "from forge.llm.tokenizer import encoding_loaded; "
        f"build_session(Settings(), pathlib.Path({str(tmp_path)!r})); "
        "print(json.dumps(['mcp' in sys.modules, 'jsonschema' in sys.modules, "
        "encoding_loaded('o200k_base')]))"
    )
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "OPENAI_API_KEY": "sk-test-key",
    }
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [False, False, False]


LAZY_UNTIL_USED = ("pydantic_settings", "pathspec", "re2")
"""Loaded by what needs them (a `FORGE_*` variable to decode, a listing or a search), not by
the start-up worker (docs/adr/0042)."""


def test_the_start_up_worker_loads_the_settings_and_the_session_without_lazy_modules(
    tmp_path: Path,
) -> None:
    # What `load_session` does: the settings from the store (a config file, the key in the
    # environment), then the session.
    config = tmp_path / "config" / "forge" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("llm:\n  model: from-file\n", encoding="utf-8")
    probe = (
        "import json, sys, pathlib; from forge.config.store import ConfigStore; "
        "from forge.session.build import build_session; "
        "settings = ConfigStore().current.settings; "
        f"session = build_session(settings, pathlib.Path({str(tmp_path)!r})); "
        f"print(json.dumps([settings.llm.model, sorted(m for m in {LAZY_UNTIL_USED!r} "
        "if m in sys.modules)]))"
    )
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "OPENAI_API_KEY": "sk-test-key",
    }
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == ["from-file", []]


async def test_an_unknown_session_id_ends_forge_with_exit_code_2(workspace: Path) -> None:
    app = ForgeApp(workspace=workspace, session_id="no-such-session")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.return_code is not None, "the app to exit")
    assert app.return_code == 2
