# Tests read and write tiny files between UI steps on purpose; blocking there is the point.
"""Findings of a user tryout of the settings overlay, each with the test that caught it: keys
typed while F2 was opening the overlay replaced the Model field; a save could not repair an
invalid value shown as its default; the newer context keys were missing; and the MCP
servers section (switch a server off, secrets never written back)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml
from textual import events
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Checkbox, Input, Static

from forge.config.settings import ContextSettings
from forge.config.store import ConfigStore, load_settings
from forge.session.build import build_session
from forge.tui.app import ForgeApp
from forge.tui.settings import SettingsScreen
from forge.tui.settings.fields import all_fields
from tests.mcp.conftest import SERVER_SCRIPT
from tests.tui.test_app_helpers import wait_until
from tests.tui.test_settings_screen import SettingsHost, notices, rendered_text, write_config

SIZE = (100, 40)


async def built(pilot: Pilot[object]) -> SettingsScreen:
    """The overlay, once every section is mounted."""
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SettingsScreen), "overlay")
    screen = pilot.app.screen
    assert isinstance(screen, SettingsScreen)
    await wait_until(pilot, lambda: getattr(screen, "built", True), "every section")
    return screen


async def test_keys_typed_while_f2_opens_the_overlay_do_not_replace_the_model(
    workspace: Path,
) -> None:
    path = write_config("llm:\n  model: main-model\n  base_url: http://127.0.0.1:9/v1\n")
    store = ConfigStore(path)
    session = build_session(store.current.settings, workspace)
    app = ForgeApp(session=session, store=store, workspace=workspace)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            # Typed right after F2, while the overlay was being built: read now, handled
            # late (a busy event loop delivers them once the overlay has focused a field).
            early = [events.Key(character, character) for character in "xyz"]
            await pilot.press("f2")
            screen = await built(pilot)
            for key in early:
                app.post_message(key)
            await pilot.pause()
            model = screen.query_one("#field-llm-model", Input)
            assert model.value == "main-model"
            # Keys typed once it is on screen edit the field, without replacing its text.
            await pilot.press("-", "2")
            assert model.value == "main-model-2"
    finally:
        await session.aclose()


async def test_a_save_repairs_an_invalid_value_shown_as_its_default() -> None:
    path = write_config(
        "# my settings\n"
        "llm:\n  model: main-model  # the big one\n  base_url: http://127.0.0.1:9/v1\n"
        "context:\n  warning_threshold: 1.5  # oops\n"
        "custom_plugin:\n  keep: me\n"
    )
    store = ConfigStore(path)
    assert [problem.key for problem in store.current.file_problems] == ["context.warning_threshold"]
    seen: list[Message] = []
    app = SettingsHost(store)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        screen = await built(pilot)
        shown = screen.query_one("#field-context-warning_threshold", Input)
        assert shown.value == "0.85"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.results, "the save")
    assert not any("Nothing changed" in notice for notice in notices(seen))
    text = path.read_text()
    assert yaml.safe_load(text)["context"]["warning_threshold"] == 0.85
    assert "# my settings" in text and "# the big one" in text
    assert yaml.safe_load(text)["custom_plugin"] == {"keep": "me"}
    assert load_settings(path).problems == ()


NEW_CONTEXT_KEYS = {
    "summary_request_timeout",
    "summary_max_retries",
    "ingest_max_share",
    "observation_masking",
    "mask_keep_recent",
    "mask_batch",
    "tool_call_summaries",
    "user_instruction_share",
}


def test_every_context_setting_has_a_field_with_its_docstring_as_help() -> None:
    shown = {field.name: field for field in all_fields() if field.section == "context"}
    leaves = {name for name in ContextSettings.model_fields if name != "summarizer"}
    assert leaves >= NEW_CONTEXT_KEYS
    assert leaves <= set(shown), f"missing from the overlay: {leaves - set(shown)}"
    for name in NEW_CONTEXT_KEYS:
        assert shown[name].description == ContextSettings.model_fields[name].description


async def test_the_new_context_fields_show_help_and_save() -> None:
    path = write_config("llm:\n  model: main-model\n  base_url: http://127.0.0.1:9/v1\n")
    app = SettingsHost(ConfigStore(path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await built(pilot)
        field = screen.query_one("#field-context-tool_call_summaries", Input)
        assert field.value == "false"
        field.focus()
        await pilot.pause()
        help_line = str(screen.query_one("#settings-help", Static).render())
        assert help_line.startswith("context.tool_call_summaries — Summarize aging tool calls")
        field.value = "maybe"
        await pilot.pause()
        reason = screen.query_one("#reason-context-tool_call_summaries", Static)
        assert "must be true or false" in str(reason.render())
        field.value = "true"
        masking = screen.query_one("#field-context-mask_keep_recent", Input)
        masking.value = "5"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.results, "the save")
    context = yaml.safe_load(path.read_text())["context"]
    assert context == {"tool_call_summaries": True, "mask_keep_recent": 5}


def test_every_tools_and_checkpoints_setting_has_a_field() -> None:
    from forge.config.keys import leaf_values
    from forge.config.settings import CheckpointSettings, Settings, ToolsSettings

    shown = {field.key for field in all_fields()}
    # Every leaf, the sub-sections' too (`tools.sandbox.mode`, `tools.web_fetch.timeout`).
    leaves = set(leaf_values(Settings()))
    for section, model in (("tools", ToolsSettings), ("checkpoints", CheckpointSettings)):
        wanted = {key for key in leaves if key.startswith(f"{section}.")}
        assert {key.split(".")[1] for key in wanted} == set(model.model_fields)
        missing = wanted - shown
        assert not missing, f"missing from the overlay: {missing}"
    for field in all_fields():
        assert field.description, f"{field.key} has no help line"


async def test_a_sandbox_and_a_web_fetch_field_are_edited_and_saved() -> None:
    path = write_config("llm:\n  model: main-model\n  base_url: http://127.0.0.1:9/v1\n")
    app = SettingsHost(ConfigStore(path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await built(pilot)
        mode = screen.query_one("#field-tools-sandbox-mode", Input)
        assert mode.value == "auto"
        assert screen.query_one("#field-tools-mode", Input).value == "ask"  # not the same field
        mode.value = "sometimes"
        await pilot.pause()
        reason = str(screen.query_one("#reason-tools-sandbox-mode", Static).render())
        assert "'on'" in reason and "'off'" in reason, reason
        mode.value = "on"
        network = screen.query_one("#field-tools-sandbox-network", Input)
        network.focus()
        await pilot.pause()
        help_line = str(screen.query_one("#settings-help", Static).render())
        assert help_line.startswith("tools.sandbox.network — ")
        network.value = "true"
        screen.query_one("#field-tools-web_fetch-timeout", Input).value = "12"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.results, "the save")
    saved = yaml.safe_load(path.read_text())
    assert saved["tools"] == {
        "sandbox": {"mode": "on", "network": True},
        "web_fetch": {"timeout": 12},
    }


async def test_the_permission_mode_and_checkpoint_bound_are_edited_and_saved() -> None:
    path = write_config("llm:\n  model: main-model\n  base_url: http://127.0.0.1:9/v1\n")
    app = SettingsHost(ConfigStore(path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await built(pilot)
        mode = screen.query_one("#field-tools-mode", Input)
        assert mode.value == "ask"
        mode.value = "sometimes"
        await pilot.pause()
        reason = str(screen.query_one("#reason-tools-mode", Static).render())
        assert "accept-edits" in reason, reason  # the allowed values are named
        mode.value = "accept-edits"
        screen.query_one("#field-checkpoints-max_bytes", Input).value = "1000000"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.results, "the save")
    saved = yaml.safe_load(path.read_text())
    assert saved["tools"] == {"mode": "accept-edits"}
    assert saved["checkpoints"] == {"max_bytes": 1_000_000}


MCP_CONFIG = f"""\
llm:
  model: main-model
  base_url: http://127.0.0.1:9/v1
mcp_servers:
  # the one I use every day
  github:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-github"]
    env: {{GITHUB_TOKEN: "${{GH_TOKEN}}"}}
    timeout: 60
  docs:
    url: http://127.0.0.1:9/mcp
    headers: {{Authorization: "Bearer ${{DOCS_TOKEN}}"}}
    enabled: false
  local:
    command: {sys.executable}
    args: [{SERVER_SCRIPT}, stdio]
  broken:
    args: [no-command]
"""


async def test_mcp_servers_are_listed_switched_and_saved_without_their_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GH_TOKEN", "gh-secret-value-0123456789")
    monkeypatch.setenv("DOCS_TOKEN", "docs-secret-value-0123456789")
    path = write_config(MCP_CONFIG)
    app = SettingsHost(ConfigStore(path))
    # 90 rows: at 80 the longer form (vision, sandbox, web fetch, background) leaves the last
    # two MCP rows below a body that does not scroll to them (noted for the next session).
    async with app.run_test(size=(120, 90)) as pilot:
        screen = await built(pilot)
        switches = {box.id: box.value for box in screen.query(Checkbox)}
        assert switches == {"mcp-enabled-0": True, "mcp-enabled-1": False, "mcp-enabled-2": True}
        screen.query_one("#settings-body").scroll_end(animate=False)
        await pilot.pause()
        text = rendered_text(app)
        assert "github" in text and "stdio: npx -y @modelcontextprotocol/server-g" in text
        assert "▐X▌ on" in text and "▐X▌ off" in text
        assert "this server is left out" in text  # the bad entry, kept in the file
        commands = [str(line.render()) for line in screen.query(".mcp-command")]
        assert commands[:2] == [
            "stdio: npx -y @modelcontextprotocol/server-github  (env: GITHUB_TOKEN)",
            "http: http://127.0.0.1:9/mcp  (headers: Authorization)",
        ]
        assert "secret-value" not in text + "".join(commands)
        github = screen.query_one("#mcp-enabled-0", Checkbox)
        github.focus()
        await pilot.press("space")  # off
        docs = screen.query_one("#mcp-enabled-1", Checkbox)
        docs.focus()
        await pilot.press("space")  # on
        await pilot.pause()
        help_line = str(screen.query_one("#settings-help", Static).render())
        assert help_line.startswith("mcp_servers.docs.enabled")
        assert [str(box.label) for box in screen.query(Checkbox)] == ["off", "on", "on"]
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.results, "the save")
    text = path.read_text()
    assert "secret-value" not in text
    assert '"${GH_TOKEN}"' in text and '"Bearer ${DOCS_TOKEN}"' in text
    assert "# the one I use every day" in text
    on_disk = yaml.safe_load(text)["mcp_servers"]
    assert on_disk["github"]["enabled"] is False and on_disk["github"]["timeout"] == 60
    assert on_disk["docs"]["enabled"] is True
    assert "enabled" not in on_disk["local"]
    assert on_disk["broken"] == {"args": ["no-command"]}  # left out as invalid, never dropped
    assert os.stat(path).st_mode & 0o777 == 0o600
    servers = load_settings(path).settings.mcp_servers
    assert not servers["github"].enabled and servers["docs"].enabled


def test_one_bad_server_entry_leaves_the_others_running() -> None:
    path = write_config(MCP_CONFIG)
    loaded = load_settings(path)
    assert set(loaded.settings.mcp_servers) == {"github", "docs", "local"}
    assert [problem.key for problem in loaded.file_problems] == ["mcp_servers.broken"]


async def test_a_save_of_another_field_leaves_the_server_entries_as_written() -> None:
    path = write_config(MCP_CONFIG)
    before = yaml.safe_load(path.read_text())["mcp_servers"]
    app = SettingsHost(ConfigStore(path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await built(pilot)
        screen.query_one("#field-llm-model", Input).value = "other-model"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.results, "the save")
    after = yaml.safe_load(path.read_text())
    assert after["llm"]["model"] == "other-model"
    assert after["mcp_servers"] == before
