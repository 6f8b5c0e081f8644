"""Shared fixtures. Every test runs with its own XDG directories and no provider env vars,
so neither the developer's config nor their API key can leak in."""

from __future__ import annotations

import os
from fnmatch import fnmatch
from pathlib import Path

import pytest

_CLEARED_PREFIXES = ("FORGE_", "OPENAI_", "ANTHROPIC_")


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point XDG_* at a temp dir and clear FORGE_*/OPENAI_*/ANTHROPIC_* variables."""
    home = tmp_path / "home"
    for variable, sub in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        path = home / sub
        path.mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(variable, str(path))
    monkeypatch.setenv("HOME", str(home))
    # Forge extracts tokenizer data itself; stop tiktoken keeping a second copy in /tmp.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    for name in list(os.environ):
        if name.startswith(_CLEARED_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory for tools and the agent."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path


CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
"""The shared corpus of real provider streams and agent sessions (beside the repo)."""


# --- the loopback OpenAI-compatible server ------------------------------------------------------

from collections.abc import Iterator  # noqa: E402

from tests.support.openai_server import OpenAIServer  # noqa: E402


@pytest.fixture(scope="session")
def _openai_server_process() -> Iterator[OpenAIServer]:
    server = OpenAIServer().start()
    yield server
    server.stop()


@pytest.fixture
def llm_server(_openai_server_process: OpenAIServer) -> Iterator[OpenAIServer]:
    """The loopback OpenAI-compatible server, reset for this test."""
    _openai_server_process.reset()
    yield _openai_server_process
    _openai_server_process.reset()


@pytest.fixture(autouse=True)
def _forget_known_secrets() -> Iterator[None]:
    """Each test starts knowing no secret: the process-wide set would otherwise carry one
    test's keys into the next test's artefacts."""
    from forge.config.secrets import KNOWN_SECRETS

    KNOWN_SECRETS.clear()
    yield
    KNOWN_SECRETS.clear()


# --- the loopback Anthropic Messages server -----------------------------------------------------

from tests.support.anthropic_server import AnthropicServer  # noqa: E402


@pytest.fixture(scope="session")
def _anthropic_server_process() -> Iterator[AnthropicServer]:
    server = AnthropicServer().start()
    yield server
    server.stop()


@pytest.fixture
def anthropic_server(_anthropic_server_process: AnthropicServer) -> Iterator[AnthropicServer]:
    """The loopback Anthropic Messages API server, reset for this test."""
    _anthropic_server_process.reset()
    yield _anthropic_server_process
    _anthropic_server_process.reset()


# --- slow tests ---------------------------------------------------------------------------------

SLOW_FIXTURES = frozenset({"tmux"})
"""A test using one of these fixtures drives a real terminal: marked `slow`."""

SLOW_MODULES = (
    "*_tmux.py",  # a real terminal
    "*test_forge_run_*.py",  # `forge run` spawned
    "acp/test_acp_bad_input.py",  # `forge acp` spawned
    "acp/test_acp_cancel.py",
    "bench/test_fleet.py",  # a fleet of `forge run`
    "bench/test_interrupt.py",
    "bench/test_replay.py",
    "mcp/test_hostile_servers.py",
    "mcp/test_tui_mcp.py",
)
"""Modules (paths under tests/, fnmatch patterns) whose tests each take many seconds: their
tests are marked `slow`. Measured with pytest-xdist on the 2-core machine (docs/adr/0052)."""

_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark `slow` (leave them out with `-m "not slow"`) the tests of `SLOW_MODULES` and every
    test that uses a real terminal fixture; others say `@pytest.mark.slow` themselves."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        try:
            where = item.path.resolve().relative_to(_TESTS).as_posix()
        except ValueError:
            where = item.path.name
        if fixtures & SLOW_FIXTURES or any(fnmatch(where, pattern) for pattern in SLOW_MODULES):
            item.add_marker(pytest.mark.slow)
