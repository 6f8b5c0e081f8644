"""Custom slash commands: loading real files from tmp dirs and expanding their arguments."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forge.agent.input.custom_commands import (
    load_custom_commands,
    project_commands_dir,
    user_commands_dir,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace, tmp_path / "user-commands"


def test_project_and_user_commands_with_namespaces(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    write(project_commands_dir(workspace) / "git" / "review.md", "Review the diff of $1.")
    write(
        user / "explain.md",
        "---\ndescription: Explain code\nmodel: small-model\n---\nExplain $ARGUMENTS\n",
    )
    loaded = load_custom_commands(workspace, user_dir=user)
    assert loaded.problems == []
    assert sorted(loaded.commands) == ["explain", "git:review"]
    explain = loaded.commands["explain"]
    assert (explain.description, explain.model, explain.scope) == (
        "Explain code",
        "small-model",
        "user",
    )
    assert loaded.commands["git:review"].scope == "project"
    found = loaded.expand_input("/git:review main")
    assert found is not None and found[1] == "Review the diff of main."


def test_project_wins_over_user(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    write(user / "fix.md", "user version")
    write(project_commands_dir(workspace) / "fix.md", "project version")
    command = load_custom_commands(workspace, user_dir=user).get("fix")
    assert command is not None and command.body == "project version"


def test_arguments_and_positional_shell_like(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    write(user / "pair.md", "All: $ARGUMENTS | first: $1 | second: $2 | third: [$3]")
    command = load_custom_commands(workspace, user_dir=user).get("pair")
    assert command is not None
    assert command.expand('"two words" b') == (
        'All: "two words" b | first: two words | second: b | third: []'
    )
    # An unbalanced quote still expands (split on whitespace).
    assert command.expand("it's x") == "All: it's x | first: it's | second: x | third: []"


def test_body_without_placeholder_gets_arguments_appended(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    write(user / "tests.md", "Write tests.\n")
    command = load_custom_commands(workspace, user_dir=user).get("tests")
    assert command is not None
    assert command.expand("") == "Write tests."
    assert command.expand("for parser.py") == "Write tests.\n\nfor parser.py"


def test_builtin_clash_is_reported_and_skipped(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    path = write(project_commands_dir(workspace) / "help.md", "my help")
    loaded = load_custom_commands(workspace, user_dir=user, reserved=["help", "model"])
    assert "help" not in loaded.commands
    assert loaded.problems == [f"{path}: /help is a built-in command; the built-in wins"]


def test_malformed_and_unreadable_files_are_reported(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    root = project_commands_dir(workspace)
    write(root / "bad.md", "---\ndescription: [unclosed\n---\nbody\n")
    write(root / "list.md", "---\n- a\n- b\n---\nbody\n")
    write(root / "empty.md", "---\ndescription: nothing\n---\n\n")
    write(root / "bad name.md", "body")
    (root / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    unreadable = write(root / "secret.md", "body")
    write(root / "good.md", "fine")
    os.chmod(unreadable, 0)
    try:
        loaded = load_custom_commands(workspace, user_dir=user)
    finally:
        os.chmod(unreadable, 0o600)
    readable_anyway = os.geteuid() == 0  # root reads any file
    assert list(loaded.commands) == (["good", "secret"] if readable_anyway else ["good"])
    text = "\n".join(loaded.problems)
    assert f"{root / 'bad.md'}: malformed front matter" in text
    assert f"{root / 'list.md'}: the front matter must be" in text
    assert f"{root / 'empty.md'}: the command has no text" in text
    assert f"{root / 'bad name.md'}: /bad name cannot be typed" in text
    assert f"{root / 'binary.md'}: cannot read it" in text
    if not readable_anyway:
        assert f"{unreadable}: cannot read it" in text


def test_missing_directories_and_plain_text_are_not_commands(dirs: tuple[Path, Path]) -> None:
    workspace, user = dirs
    loaded = load_custom_commands(workspace, user_dir=user)
    assert (loaded.commands, loaded.problems) == ({}, [])
    write(user / "etc.md", "x")
    loaded = load_custom_commands(workspace, user_dir=user)
    assert loaded.expand_input("/etc/hosts is broken") is None
    assert loaded.expand_input("//etc") is None
    assert loaded.expand_input("hello") is None


def test_user_dir_follows_xdg_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert user_commands_dir() == tmp_path / "forge" / "commands"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative")
    assert user_commands_dir() == Path.home() / ".config" / "forge" / "commands"
