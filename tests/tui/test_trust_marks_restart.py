"""The trust dialog's `(new)` and `(changed)` marks survive a restart (issue 35, docs/adr/0048):
the store keeps a digest of each trusted program with the file's fingerprint, so the first
ask of a new run marks what changed since the user trusted it. Trusting one changed file
keeps what was trusted of the others: an unchanged `.forge/mcp.yaml` is not asked about
again as "changed" at the next start (found in the 80x24 tryout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static

from forge.agent.trust.gate import TrustStatus, WorkspaceTrust
from forge.agent.trust.sources import workspace_sources
from forge.agent.trust.store import trust_store_path
from forge.tui.app import ForgeApp
from forge.tui.screens.trust import TrustScreen
from tests.support.openai_server import OpenAIServer
from tests.tui.test_app_helpers import configure, make_app, wait_until
from tests.tui.test_trust_dialog_small import write_servers

SIZE = (80, 24)


def write_hooks(workspace: Path, command: str) -> None:
    hooks = {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": command}]}]}
    (workspace / ".forge" / "hooks.json").write_text(json.dumps({"hooks": hooks}))


async def answer_dialog(app: ForgeApp, key: str) -> str:
    """Wait for the trust dialog, answer it with `key`; the listing it showed."""
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), "the dialog")
        await wait_until(pilot, lambda: bool(app.screen.query("#not_now")), "its buttons")
        listing = str(app.screen.query_one("#trust-program-list", Static).render())
        await pilot.press(key)
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen), "answered")
        await wait_until(pilot, lambda: app.mcp_watch.trust.decisions == 1, "the answer applied")
    return listing


async def test_marks_of_a_reask_survive_a_restart(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    write_servers(workspace, {"kept": "exit 0", "edited": "exit 1"})
    store = configure(llm_server, monkeypatch)
    first = await answer_dialog(make_app(store, workspace), "t")
    stored = trust_store_path().read_text(encoding="utf-8")

    write_servers(workspace, {"kept": "exit 0", "edited": "exit 2", "added": "exit 3"})
    second = await answer_dialog(make_app(store, workspace), "n")

    assert "(new)" not in first and "(changed)" not in first
    assert "  (changed) edited: sh -c 'exit 2'" in second
    assert "  (new) added: sh -c 'exit 3'" in second
    assert "  kept: sh -c 'exit 0'" in second
    assert "exit 1" not in stored, "the store keeps digests, not command lines"


async def test_trusting_a_changed_file_keeps_the_others_trusted_at_the_next_start(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    write_servers(workspace, {"docs": "exit 0"})
    write_hooks(workspace, "echo one")
    store = configure(llm_server, monkeypatch)
    await answer_dialog(make_app(store, workspace), "t")  # both files
    write_hooks(workspace, "echo two")
    asked = await answer_dialog(make_app(store, workspace), "t")  # the hooks file alone

    trust = WorkspaceTrust(workspace)
    statuses = {s.file: trust.status(s) for s in workspace_sources(workspace) if s.programs}
    assert ".forge/mcp.yaml" not in asked
    assert statuses == {
        ".forge/mcp.yaml": TrustStatus.TRUSTED,
        ".forge/hooks.json": TrustStatus.TRUSTED,
    }
