"""MCP servers that send what they should not (issue 20, docs/adr/0036): a malformed tool
leaves out only itself, a tool definition above `mcp.max_tool_schema_bytes` is left out,
colliding names are reported, and stderr is kept as a bounded tail. A real stdio server
process (`servers/hostile_server.py`, JSON-RPC by hand: the SDK's server would refuse to send
such tools) and real `forge run` subprocesses."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from forge.agent.mcp import McpServers
from forge.agent.mcp.notices import McpServerNotice
from forge.agent.mcp.stderr_tail import StderrTail
from forge.agent.tools.base import ToolContext
from forge.config.settings import McpServerSettings, McpSettings
from tests.headless.test_headless import forge_run, jsonl
from tests.support.openai_server import Call, ContextOverflow, OpenAIServer, ToolCalls
from tests.tui.test_app_helpers import configure, make_app, notices, wait_until

HOSTILE_SCRIPT = Path(__file__).resolve().parent / "servers" / "hostile_server.py"


def good(name: str = "good") -> dict[str, Any]:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    return {"name": name, "description": "A fine tool.", "inputSchema": schema}


def huge_schema(name: str = "huge", size: int = 600_000) -> dict[str, Any]:
    properties = {
        f"field_{n}": {"type": "string", "description": "x" * 100} for n in range(size // 140)
    }
    return {
        "name": name,
        "description": "Huge.",
        "inputSchema": {"type": "object", "properties": properties},
    }


def hostile(tmp_path: Path, tools: list[Any], stderr_bytes: int = 0) -> McpServerSettings:
    listing = tmp_path / f"tools-{len(list(tmp_path.glob('tools-*')))}.json"
    listing.write_text(json.dumps(tools))
    return McpServerSettings.model_validate(
        {
            "command": sys.executable,
            "args": [str(HOSTILE_SCRIPT)],
            "env": {"HOSTILE_TOOLS": str(listing), "HOSTILE_STDERR_BYTES": str(stderr_bytes)},
        }
    )


async def started(
    tmp_path: Path, servers: dict[str, McpServerSettings], limits: McpSettings | None = None
) -> tuple[McpServers, list[McpServerNotice]]:
    manager = McpServers(servers, tmp_path, limits=limits)
    notices: list[McpServerNotice] = []
    manager.subscribe(notices.append)
    await manager.wait_settled(60)
    manager.tools()  # the collision check runs as the tools are offered
    return manager, notices


async def test_a_malformed_tool_leaves_out_only_itself(tmp_path: Path) -> None:
    tools = [good(), {"name": "bad", "inputSchema": "not an object"}, {"inputSchema": {}}]
    servers, notices = await started(tmp_path, {"h": hostile(tmp_path, tools)})
    try:
        assert servers.statuses() == {"h": "ready (1 tool)"}
        (tool,) = servers.tools()
        result = await tool.run({"text": "hi"}, ToolContext(tmp_path))
        assert result.content == 'called good with {"text": "hi"}'
        (notice,) = notices
        assert notice.kind == "tools_left_out" and notice.server == "h"
        assert "bad: malformed (inputSchema" in notice.reason
        assert "tool #3: malformed (name" in notice.reason
    finally:
        await servers.aclose()


async def test_a_tool_above_the_schema_cap_is_left_out_with_a_notice(tmp_path: Path) -> None:
    tools = [good(), huge_schema(), huge_schema("medium", 20_000)]
    servers, notices = await started(tmp_path, {"h": hostile(tmp_path, tools)})
    lowered, lowered_notices = await started(
        tmp_path, {"h": hostile(tmp_path, tools)}, McpSettings(max_tool_schema_bytes=10_000)
    )
    try:
        assert {t.name for t in servers.tools()} == {"h__good", "h__medium"}
        (notice,) = notices
        assert notice.reason.startswith("huge: its definition is 6")
        assert "above mcp.max_tool_schema_bytes (32,768)" in notice.reason
        assert "tools left out: huge: its definition is" in notice.text()
        assert {t.name for t in lowered.tools()} == {"h__good"}
        assert "medium: its definition is" in lowered_notices[0].reason
    finally:
        await servers.aclose()
        await lowered.aclose()


async def test_colliding_tool_names_are_reported_and_the_first_wins(tmp_path: Path) -> None:
    tools = [good("read.file"), good("read_file"), good("read-file")]
    servers, notices = await started(tmp_path, {"h": hostile(tmp_path, tools)})
    try:
        offered = servers.tools()
        assert [(t.name, t.remote_name) for t in offered] == [  # type: ignore[attr-defined]
            ("h__read_file", "read.file"),
            ("h__read-file", "read-file"),
        ]
        (notice,) = notices
        assert notice.reason == "read_file: its name h__read_file is taken by h's read.file"
        servers.tools()
        assert len(notices) == 1  # told once
    finally:
        await servers.aclose()


async def test_stderr_is_kept_as_a_bounded_tail(tmp_path: Path) -> None:
    missing = hostile(tmp_path, [good()], stderr_bytes=5_000_000)
    missing.env["HOSTILE_TOOLS"] = str(tmp_path / "no-such-file.json")
    servers, notices = await started(
        tmp_path, {"h": missing}, McpSettings(stderr_tail_bytes=65_536)
    )
    try:
        (notice,) = notices
        assert notice.kind == "start_failed"
        # The last lines of stderr say why, after 5 MB of noise that was not kept.
        assert "FileNotFoundError" in notice.reason
        assert len(notice.reason) < 1_000
    finally:
        await servers.aclose()


async def test_the_tail_holds_only_the_newest_bytes() -> None:
    tail = StderrTail(65_536)
    writer = (
        "import sys\nfor n in range(100_000): sys.stderr.write(f'line {n} ' + 'x' * 40 + '\\n')"
    )
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", writer, stderr=tail.writer)
    assert await process.wait() == 0
    try:
        text = tail.text()
        assert len(text.encode()) <= 65_536
        assert text.endswith("line 99999 " + "x" * 40 + "\n")
        assert tail.dropped >= 4_000_000
    finally:
        tail.close()


def test_forge_run_leaves_out_a_600_kb_tool_and_says_so(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    entry = hostile(tmp_path, [good(), huge_schema()]).model_dump(
        include={"command", "args", "env"}
    )
    (workspace / ".forge").mkdir()
    (workspace / ".forge" / "mcp.yaml").write_text(json.dumps({"mcpServers": {"h": entry}}))
    llm_server.enqueue(ToolCalls([Call("task_completion", {"result": "done"})]))
    result = forge_run(
        llm_server,
        workspace,
        "--trust-workspace",
        "--output",
        "jsonl",
        "work",
        env={"FORGE_CONTEXT__MAX_TOKENS": "16000"},
    )
    assert result.returncode == 0, result.stderr
    assert "forge run: MCP server h: tools left out: huge: its definition is" in result.stderr
    (record,) = [r for r in jsonl(result) if r["type"] == "mcp_server"]
    assert record["kind"] == "tools_left_out"
    request = llm_server.requests[0]
    sent = [tool["function"]["name"] for tool in request.body["tools"]]
    assert "h__good" in sent and "h__huge" not in sent
    assert len(json.dumps(request.body)) < 100_000


async def test_the_app_tells_the_tools_left_out_in_the_chat(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, tmp_path: Path
) -> None:
    tools = [good(), huge_schema(), {"name": "bad", "inputSchema": 7}]
    entry = hostile(tmp_path, tools).model_dump(include={"command", "args", "env"})
    store = configure(llm_server, monkeypatch, config={"mcp_servers": {"h": entry}})
    app = make_app(store, workspace)
    async with app.run_test(size=(120, 40)) as pilot:

        def told() -> list[str]:
            return [n for n in notices(app) if "tools left out" in n]

        await wait_until(pilot, lambda: bool(told()), "the notice")
        (text,) = told()
        assert text.startswith("MCP server h: tools left out: bad: malformed")
        assert "huge: its definition is" in text and text.endswith("; see /mcp.")
        assert app.session.servers.mcp is not None
        assert [t.name for t in app.session.servers.mcp.tools()] == ["h__good"]


def test_an_overflow_filled_by_mcp_tool_definitions_names_them(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    tools = [huge_schema(f"t{n}", 20_000) for n in range(6)]  # each under the cap, 6 too many
    entry = hostile(tmp_path, tools).model_dump(include={"command", "args", "env"})
    (workspace / ".forge").mkdir()
    (workspace / ".forge" / "mcp.yaml").write_text(json.dumps({"mcpServers": {"h": entry}}))
    llm_server.enqueue(ContextOverflow(16_000, 40_000))
    result = forge_run(
        llm_server,
        workspace,
        "--trust-workspace",
        "work",
        # Sent in full (deferred, they would not fill it: docs/adr/0054).
        env={"FORGE_CONTEXT__MAX_TOKENS": "16000", "FORGE_MCP__DEFER_TOOLS": "never"},
    )
    assert result.returncode == 1
    assert "nothing could be shrunk" in result.stderr
    assert "tool definitions" in result.stderr and "largest: h__t" in result.stderr
    assert "excluded tools' messages" not in result.stderr
