"""`forge run` with subagents: a child's records carry its agent, the result lists each
child's cost, `--max-turns` counts the main agent's requests only and the budget counts the
children's (docs/adr/0045). A real subprocess against the loopback server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.hooks.support import command_hook, write_user_hooks
from tests.headless.test_headless import forge_run, stream_json
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

PRICES = "FORGE_PRICES"


def write_agent(workspace: Path, name: str, model: str) -> None:
    folder = workspace / ".forge" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: finds things\nmodel: {model}\n---\nFind things.\n"
    )


def task(agent: str, prompt: str, call_id: str) -> Call:
    return Call("task", {"agent": agent, "prompt": prompt}, id=call_id)


def test_child_records_carry_their_agent_and_the_result_lists_each_childs_cost(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "finder", "gpt-4o-mini")
    (workspace / "a.txt").write_text("a\n")
    llm_server.enqueue_for(
        "gpt-4o",
        ToolCalls([task("finder", "read a.txt", "t1")], prompt_tokens=1000, completion_tokens=10),
        ToolCalls(
            [Call("task_completion", {"result": "done"})], prompt_tokens=1200, completion_tokens=10
        ),
    )
    llm_server.enqueue_for(
        "gpt-4o-mini",
        ToolCalls([Call("read_file", {"path": "a.txt"})], prompt_tokens=500, completion_tokens=5),
        ToolCalls([Call("list_files", {})], prompt_tokens=600, completion_tokens=5),
        Text("a.txt holds a", prompt_tokens=700, completion_tokens=5),
    )
    result = forge_run(
        llm_server,
        workspace,
        "--model",
        "gpt-4o",
        "--max-turns",
        "2",  # the main agent's two requests; the child's three do not count
        "--output-format",
        "forge-jsonl",
        "go",
    )
    assert result.returncode == 0, result.stderr
    records = stream_json(result)
    child = [record for record in records if record.get("agent") == "finder"]
    assert {"tool_call_started", "tool_call_finished", "turn_finished"} <= {
        record["type"] for record in child
    }
    assert all(record["parent_call_id"] == "t1" for record in child)
    main_tools = [r for r in records if r["type"] == "tool_call_finished" and "agent" not in r]
    assert [r["name"] for r in main_tools] == ["task", "task_completion"]
    assert main_tools[0]["result"].startswith("a.txt holds a")
    final = records[-1]
    assert final["type"] == "result" and final["num_turns"] == 2
    (finder,) = final["subagents"]
    assert finder["agent"] == "finder" and finder["requests"] == 3
    assert finder["input_tokens"] == 1800
    assert finder["dollars"] == pytest.approx((1800 * 0.15 + 15 * 0.6) / 1e6)
    turn_cost = next(r for r in records if r["type"] == "turn_finished" and "agent" not in r)
    assert turn_cost["cost"]["subagents"][0]["agent"] == "finder"
    assert any(m.get("agent") == "finder" for m in turn_cost["cost"]["models"])


def test_the_budget_counts_the_childrens_requests(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "finder", "gpt-4o")
    llm_server.enqueue_for(
        "gpt-4o",
        ToolCalls([task("finder", "look", "t1")], prompt_tokens=10, completion_tokens=1),
        ToolCalls([Call("list_files", {})], text="child: the root first", prompt_tokens=100_000),
        ToolCalls([Call("list_files", {})], text="child: again", prompt_tokens=100_000),
        Text("parent never gets here"),
    )
    result = forge_run(
        llm_server,
        workspace,
        "--model",
        "gpt-4o",
        "--max-budget-usd",
        "0.1",
        "--output-format",
        "forge-jsonl",
        "go",
    )
    records = stream_json(result)
    final = records[-1]
    assert final["stop_reason"] == "max_budget", result.stderr
    task_result = next(
        r for r in records if r["type"] == "tool_call_finished" and r["name"] == "task"
    )
    assert task_result["result"].startswith("child: the root first")
    assert '"completed": false' in task_result["result"]
    assert final["subagents"][0]["requests"] == 1


def test_text_mode_shows_a_childs_tool_calls_labelled_on_stderr(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "finder", "gpt-4o-mini")
    (workspace / "a.txt").write_text("a\n")
    llm_server.enqueue_for(
        "gpt-4o",
        ToolCalls([task("finder", "read a.txt", "t1")]),
        ToolCalls([Call("task_completion", {"result": "a.txt holds a"})]),
    )
    llm_server.enqueue_for(
        "gpt-4o-mini", ToolCalls([Call("read_file", {"path": "a.txt"})]), Text("it holds a")
    )
    result = forge_run(llm_server, workspace, "--model", "gpt-4o", "go")
    assert result.returncode == 0, result.stderr
    assert "  [finder] → read_file: a.txt" in result.stderr
    assert result.stdout.strip() == "a.txt holds a"
    assert "subagents $" in result.stderr  # the cost line names the children's share


def test_a_childs_hook_output_and_block_are_printed_labelled_with_its_agent(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """The parent's hooks run for a child's calls; what they say is shown as for the
    parent's, with the child's name (the text mode printed nothing of it)."""
    write_user_hooks(
        {
            "PreToolUse": [command_hook("echo no secrets >&2; exit 2", "Write")],
            "PostToolUse": [command_hook("echo listed by the hook", "Glob")],
        }
    )
    write_agent(workspace, "finder", "gpt-4o-mini")
    llm_server.enqueue_for("gpt-4o", ToolCalls([task("finder", "look", "t1")]), Text("parent done"))
    llm_server.enqueue_for(
        "gpt-4o-mini",
        ToolCalls([Call("list_files", {}), Call("write_file", {"path": "s.txt", "content": "x"})]),
        Text("child done"),
    )
    result = forge_run(llm_server, workspace, "--model", "gpt-4o", "--yes", "go")
    assert result.returncode == 0, result.stderr
    assert "[finder] [hook] PostToolUse" in result.stderr
    assert "listed by the hook" in result.stderr
    assert "[finder] [hook] PreToolUse blocked by" in result.stderr
    assert "no secrets" in result.stderr
    assert not (workspace / "s.txt").exists()
