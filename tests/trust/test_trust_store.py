"""The trust store and the gate on real files: decisions per absolute workspace path with a
fingerprint of each defining file; a new or changed definition asks again; a corrupt or
unreadable store means "not trusted" with a warning, never a crash (docs/adr/0034)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from forge.agent.mcp.servers import read_project_servers
from forge.agent.trust import TrustStatus, TrustStore, WorkspaceTrust, trust_store_path

HOSTILE = """\
mcpServers:
  evil:
    command: sh
    args: ["-c", "echo ran > FLAG"]
    env: {KEY: "${OPENAI_API_KEY}"}
"""


def hostile_workspace(root: Path, text: str = HOSTILE) -> Path:
    (root / ".forge").mkdir(parents=True, exist_ok=True)
    (root / ".forge" / "mcp.yaml").write_text(text, encoding="utf-8")
    return root


def test_an_unknown_workspace_is_undecided_and_names_what_it_would_run(workspace: Path) -> None:
    source = read_project_servers(hostile_workspace(workspace)).source
    trust = WorkspaceTrust(workspace)
    assert trust.status(source) is TrustStatus.UNDECIDED
    assert not trust.permits(source)
    (program,) = source.programs
    assert program.name == "evil"
    assert program.command == "sh -c 'echo ran > FLAG'"
    assert program.variables == ("OPENAI_API_KEY",)


def test_trust_is_stored_per_absolute_path_privately_and_survives_a_new_session(
    workspace: Path,
) -> None:
    source = read_project_servers(hostile_workspace(workspace)).source
    assert WorkspaceTrust(workspace).trust([source]) == ""
    path = trust_store_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    stored = json.loads(path.read_text())["workspaces"]
    assert list(stored) == [str(workspace.resolve())]
    assert stored[str(workspace.resolve())]["fingerprints"] == {
        ".forge/mcp.yaml": source.fingerprint
    }
    later = WorkspaceTrust(workspace)  # the next start
    assert later.status(source) is TrustStatus.TRUSTED and later.permits(source)
    other = hostile_workspace(workspace.parent / "other")
    other_source = read_project_servers(other).source
    assert WorkspaceTrust(other).status(other_source) is TrustStatus.UNDECIDED


def test_a_changed_or_added_definition_asks_again_but_formatting_does_not(
    workspace: Path,
) -> None:
    hostile_workspace(workspace)
    WorkspaceTrust(workspace).trust([read_project_servers(workspace).source])
    reformatted = (
        "# a comment\nmcpServers: {evil: {command: sh, env: {KEY: '${OPENAI_API_KEY}'}, "
        "args: ['-c', 'echo ran > FLAG']}}\n"
    )
    hostile_workspace(workspace, reformatted)
    assert WorkspaceTrust(workspace).status(read_project_servers(workspace).source) is (
        TrustStatus.TRUSTED
    )
    hostile_workspace(workspace, HOSTILE.replace("echo ran", "echo changed"))
    changed = read_project_servers(workspace).source
    trust = WorkspaceTrust(workspace)
    assert trust.status(changed) is TrustStatus.CHANGED
    assert trust.to_ask([changed]) == [changed]
    hostile_workspace(workspace, HOSTILE + "  second:\n    command: sh\n")
    assert WorkspaceTrust(workspace).status(read_project_servers(workspace).source) is (
        TrustStatus.CHANGED
    )


def test_not_now_holds_for_the_session_only_and_never_is_stored(workspace: Path) -> None:
    source = read_project_servers(hostile_workspace(workspace)).source
    trust = WorkspaceTrust(workspace)
    trust.not_now()
    assert trust.status(source) is TrustStatus.NOT_NOW and trust.to_ask([source]) == []
    assert WorkspaceTrust(workspace).status(source) is TrustStatus.UNDECIDED  # next start
    assert trust.never() == ""
    fresh = WorkspaceTrust(workspace)
    assert fresh.status(source) is TrustStatus.NEVER and fresh.to_ask([source]) == []
    assert fresh.revoke() is True
    assert WorkspaceTrust(workspace).status(source) is TrustStatus.UNDECIDED


def test_trust_for_this_run_needs_no_store(workspace: Path) -> None:
    source = read_project_servers(hostile_workspace(workspace)).source
    assert WorkspaceTrust(workspace, trusted_for_run=True).permits(source)
    assert not trust_store_path().exists()


def test_a_corrupt_store_means_untrusted_with_a_warning_and_is_kept_when_replaced(
    workspace: Path,
) -> None:
    source = read_project_servers(hostile_workspace(workspace)).source
    WorkspaceTrust(workspace).trust([source])
    path = trust_store_path()
    for damage in ("{not json", '{"workspaces": []}', "[1, 2]", "\x00\xff"):
        path.write_text(damage, encoding="latin-1")
        trust = WorkspaceTrust(workspace)
        assert trust.status(source) is TrustStatus.UNDECIDED, damage
        assert not trust.permits(source)
        assert "cannot be used" in trust.store_problem and str(path) in trust.store_problem
    assert WorkspaceTrust(workspace).trust([source]) == ""
    assert path.with_name("trust.json.bad").read_text(encoding="latin-1") == "\x00\xff"
    assert WorkspaceTrust(workspace).permits(source)


def test_a_record_of_the_wrong_shape_counts_as_no_decision(workspace: Path) -> None:
    source = read_project_servers(hostile_workspace(workspace)).source
    path = trust_store_path()
    path.parent.mkdir(parents=True)
    key = str(workspace.resolve())
    for record in ({"decision": "maybe"}, {"decision": "trusted", "fingerprints": [1]}, "x"):
        path.write_text(json.dumps({"workspaces": {key: record}}))
        assert WorkspaceTrust(workspace).status(source) is TrustStatus.UNDECIDED


def test_an_unreadable_store_means_untrusted_and_is_moved_aside_by_a_decision(
    workspace: Path,
) -> None:
    source = read_project_servers(hostile_workspace(workspace)).source
    path = trust_store_path()
    path.mkdir(parents=True)  # a directory where the file should be: it cannot be read
    trust = WorkspaceTrust(workspace)
    assert trust.status(source) is TrustStatus.UNDECIDED
    assert "cannot read" in trust.store_problem
    assert trust.trust([source]) == ""
    assert path.with_name("trust.json.bad").is_dir()
    assert WorkspaceTrust(workspace).permits(source)


def test_a_store_that_cannot_be_written_trusts_for_this_session_only(workspace: Path) -> None:
    source = read_project_servers(hostile_workspace(workspace)).source
    folder = trust_store_path().parent
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("a file where Forge's state folder should be")
    trust = WorkspaceTrust(workspace)
    assert trust.status(source) is TrustStatus.UNDECIDED
    assert "cannot read" in trust.store_problem
    warning = trust.trust([source])
    assert "could not be saved" in warning
    assert trust.permits(source)  # this session only
    assert not WorkspaceTrust(workspace).permits(source)


def test_a_store_path_given_explicitly_is_used(tmp_path: Path, workspace: Path) -> None:
    source = read_project_servers(hostile_workspace(workspace)).source
    store = TrustStore(tmp_path / "elsewhere" / "trust.json")
    WorkspaceTrust(workspace, store).trust([source])
    assert store.get(workspace) is not None
    assert not trust_store_path().exists()
