"""Agent definition files: where they are read, what wins, and how a bad one is reported."""

from __future__ import annotations

from pathlib import Path

from forge.agent.modes import PermissionMode
from forge.agent.subagents.definitions import load_agent_definitions
from forge.agent.subagents.run import stricter_mode


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_built_in_explore_agent_is_read_only(workspace: Path, tmp_path: Path) -> None:
    loaded = load_agent_definitions(workspace, user_dir=tmp_path / "none")
    explore = loaded.get("explore")
    assert explore is not None and explore.permission_mode is PermissionMode.READ_ONLY
    assert explore.allows("read_file") and explore.allows("search_files")
    assert not explore.allows("write_file") and not explore.allows("execute_command")
    assert loaded.problems == []


def test_fields_are_read_and_claude_code_names_are_mapped(workspace: Path, tmp_path: Path) -> None:
    write(
        workspace / ".claude/agents/reviewer.md",
        "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep, Bash, github__*\n"
        "model: sonnet\nmaxTurns: 5\npermissionMode: plan\n---\nReview carefully.\n",
    )
    write(
        workspace / ".forge/agents/cheap.md",
        "---\nname: cheap\ndescription: Cheap work\nmodel: small-model\n"
        "tools: [read_file, task]\npermission_mode: accept-edits\n---\nBe brief.\n",
    )
    loaded = load_agent_definitions(workspace, user_dir=tmp_path / "none")
    reviewer, cheap = loaded.get("reviewer"), loaded.get("cheap")
    assert reviewer is not None and cheap is not None
    assert reviewer.tools == ("read_file", "search_files", "execute_command", "github__*")
    assert reviewer.allows("github__create_issue") and not reviewer.allows("gitlab__x")
    assert reviewer.model == "" and reviewer.max_turns == 5  # "sonnet" names no Forge model
    assert reviewer.permission_mode is PermissionMode.READ_ONLY
    assert reviewer.prompt == "Review carefully." and reviewer.scope == "project"
    assert cheap.model == "small-model" and cheap.tools == ("read_file",)  # never `task`
    assert not cheap.allows("task")
    everything = loaded.get("explore")
    assert everything is not None


def test_a_definition_without_tools_allows_everything_but_task(
    workspace: Path, tmp_path: Path
) -> None:
    write(workspace / ".forge/agents/all.md", "---\nname: all\ndescription: d\n---\nGo.\n")
    definition = load_agent_definitions(workspace, user_dir=tmp_path / "none").get("all")
    assert definition is not None and definition.tools is None and definition.max_turns == 30
    assert definition.allows("write_file") and definition.allows("srv__tool")
    assert not definition.allows("task")


def test_the_project_wins_over_the_user_and_the_clash_is_reported(
    workspace: Path, tmp_path: Path
) -> None:
    user = tmp_path / "user-agents"
    user_file = write(user / "helper.md", "---\nname: helper\ndescription: user's\n---\nU.\n")
    project_file = write(
        workspace / ".forge/agents/helper.md",
        "---\nname: helper\ndescription: project's\n---\nP.\n",
    )
    write(
        workspace / ".forge/agents/explore.md", "---\nname: explore\ndescription: mine\n---\nE.\n"
    )
    loaded = load_agent_definitions(workspace, user_dir=user)
    helper = loaded.get("helper")
    assert helper is not None and helper.description == "project's"
    assert any(str(user_file) in p and str(project_file) in p for p in loaded.problems)
    assert any("built-in" in problem and "explore" in problem for problem in loaded.problems)


def test_invalid_files_are_reported_by_file_and_field(workspace: Path, tmp_path: Path) -> None:
    folder = workspace / ".forge/agents"
    write(folder / "no-description.md", "---\nname: nodesc\n---\nBody.\n")
    write(folder / "bad-turns.md", "---\nname: t\ndescription: d\nmax_turns: lots\n---\nBody.\n")
    write(folder / "bad-mode.md", "---\nname: m\ndescription: d\npermission_mode: yolo\n---\nB.\n")
    write(folder / "bad-name.md", "---\nname: Bad Name\ndescription: d\n---\nBody.\n")
    write(folder / "bad-yaml.md", "---\nname: [unclosed\n---\nBody.\n")
    write(folder / "no-front.md", "Just a body.\n")
    write(folder / "empty.md", "---\nname: e\ndescription: d\n---\n\n")
    write(folder / "bad-tools.md", "---\nname: bt\ndescription: d\ntools: 3\n---\nBody.\n")
    loaded = load_agent_definitions(workspace, user_dir=tmp_path / "none")
    problems = "\n".join(loaded.problems)
    expected = {
        "no-description.md": "`description` is required",
        "bad-turns.md": "`max_turns`",
        "bad-mode.md": "`permission_mode` 'yolo'",
        "bad-name.md": "`name`",
        "bad-yaml.md": "malformed front matter",
        "no-front.md": "no front matter",
        "empty.md": "body",
        "bad-tools.md": "`tools`",
    }
    for file_name, field in expected.items():
        line = next(p for p in loaded.problems if file_name in p)
        assert field in line, (file_name, line)
    assert sorted(loaded.agents) == ["explore"], problems


def test_a_file_over_the_cap_is_refused_by_name(workspace: Path, tmp_path: Path) -> None:
    big = write(
        workspace / ".forge/agents/big.md",
        "---\nname: big\ndescription: d\n---\n" + "x" * 5000 + "\n",
    )
    loaded = load_agent_definitions(workspace, user_dir=tmp_path / "none", max_file_bytes=1000)
    assert loaded.get("big") is None
    assert any(str(big) in p and "agents.max_file_bytes" in p for p in loaded.problems)


def test_a_childs_mode_is_never_looser_than_its_parents() -> None:
    assert stricter_mode(PermissionMode.READ_ONLY, PermissionMode.AUTO) is PermissionMode.READ_ONLY
    assert stricter_mode(PermissionMode.AUTO, PermissionMode.READ_ONLY) is PermissionMode.READ_ONLY
    assert stricter_mode(PermissionMode.ASK, None) is PermissionMode.ASK
    assert stricter_mode(PermissionMode.ACCEPT_EDITS, PermissionMode.ASK) is PermissionMode.ASK


def test_a_childs_policy_follows_the_parents_mode_as_it_changes() -> None:
    from forge.agent.approvals import ApprovalPolicy
    from forge.agent.subagents.definitions import AgentDefinition
    from forge.agent.subagents.run import Subagents
    from forge.agent.tools.read_ledger import FileReadLedger
    from forge.agent.tools.write_file import WriteFileTool
    from forge.llm.messages import ToolCall

    parent = ApprovalPolicy(mode=PermissionMode.AUTO)
    definition = AgentDefinition("w", "d", "p", permission_mode=PermissionMode.ACCEPT_EDITS)
    runner = Subagents(Path("."), factory=None)  # type: ignore[arg-type]  # policies only
    child = runner.policy_for(definition, parent)
    write = ToolCall("c1", "write_file", '{"path": "a", "content": "b"}')
    tool = WriteFileTool(FileReadLedger())
    assert child.decide(write, tool) == "allow"  # accept-edits: the definition's bound
    parent.mode = PermissionMode.READ_ONLY  # the user switches while the child runs
    assert child.decide(write, tool) == "refuse"
    assert runner.policy_for(definition, parent) is child  # one policy per agent name
