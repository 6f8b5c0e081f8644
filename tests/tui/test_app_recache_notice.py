"""`forge --continue` on Claude after the prompt cache expired: before the first request, the
chat says what re-caching the prompt costs (docs/adr/0037). The real app, the real session
file, the loopback Anthropic Messages server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge.config.store import ConfigStore
from forge.session.build import build_session
from tests.agent.loop_harness import drive
from tests.support.anthropic_server import Answer, AnthropicServer
from tests.tui.test_app_helpers import make_app, notices, wait_until

SIZE = (120, 40)


def claude_store(server: AnthropicServer, monkeypatch: pytest.MonkeyPatch) -> ConfigStore:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-recache-0123456789")
    monkeypatch.setenv("FORGE_LLM__PROVIDER", "anthropic")
    monkeypatch.setenv("FORGE_LLM__BASE_URL", server.base_url)
    monkeypatch.setenv("FORGE_LLM__MODEL", "claude-sonnet-4-5")
    return ConfigStore()


def age_session(path: Path, seconds: float) -> None:
    def older(value: object) -> object:
        if isinstance(value, dict):
            return {
                key: item - seconds
                if key == "created_at" and isinstance(item, float)
                else older(item)
                for key, item in value.items()
            }
        if isinstance(value, list):
            return [older(item) for item in value]
        return value

    lines = [json.dumps(older(json.loads(line))) for line in path.read_text().splitlines()]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("idle", "says_it"), [(2 * 3600, True), (60, False)])
async def test_resuming_says_what_re_caching_costs_once_the_cache_expired(
    anthropic_server: AnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
    workspace: Path,
    idle: float,
    says_it: bool,
) -> None:
    store = claude_store(anthropic_server, monkeypatch)
    anthropic_server.enqueue(Answer("hello"))
    first = build_session(store.current.settings, workspace)
    await drive(first.agent.run_turn("hi"))
    await first.aclose()
    age_session(first.store.path_for(first.session_id), idle)

    app = make_app(store, workspace, resume_latest=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: any("Resumed session" in n for n in notices(app)), "resume")
        await pilot.pause()
        shown = [n for n in notices(app) if "re-caches" in n]
    await app.session.aclose()
    assert len(anthropic_server.requests) == 1  # said before any new request
    if says_it:
        (notice,) = shown
        assert notice.startswith("Resuming re-caches ") and "≈ $" in notice
        assert "last request 2 h ago" in notice
    else:
        assert shown == []
