"""Invariant 6: file tools cannot reach outside the workspace — `..`, absolute paths, symlinks."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.agent.tools.base import ToolError
from forge.agent.tools.workspace import resolve_in_workspace
from tests.agent.tools.support import call_tool


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the workspace holding a secret file."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("top secret\n")
    return path


def test_relative_paths_resolve_inside(workspace: Path) -> None:
    (workspace / "src").mkdir()
    resolved = resolve_in_workspace(workspace, "src/../src/app.py")
    assert resolved == workspace.resolve() / "src" / "app.py"


def test_dot_is_the_workspace(workspace: Path) -> None:
    assert resolve_in_workspace(workspace, ".") == workspace.resolve()


def test_absolute_path_inside_is_allowed(workspace: Path) -> None:
    inside = workspace / "a.txt"
    assert resolve_in_workspace(workspace, str(inside)) == inside.resolve()


@pytest.mark.parametrize("path", ["../x", "../../etc/passwd", "src/../../x", "./.."])
def test_dot_dot_escapes_are_refused(workspace: Path, path: str) -> None:
    with pytest.raises(ToolError, match=r"is outside the workspace"):
        resolve_in_workspace(workspace, path)


def test_error_names_the_path(workspace: Path) -> None:
    with pytest.raises(ToolError) as raised:
        resolve_in_workspace(workspace, "../x")
    assert str(raised.value) == "path '../x' is outside the workspace"


def test_absolute_path_outside_is_refused(workspace: Path, outside: Path) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, str(outside / "secret.txt"))
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, "/etc/passwd")


def test_sibling_with_common_prefix_is_outside(tmp_path: Path, workspace: Path) -> None:
    sibling = tmp_path / (workspace.name + "-other")
    sibling.mkdir()
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, str(sibling / "file"))


def test_symlinked_file_to_outside_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, "link.txt")


def test_symlinked_parent_of_a_new_file_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "escape").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, "escape/new/file.txt")


def test_dangling_symlink_to_outside_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "dangling").symlink_to(outside / "not-yet-there.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, "dangling")


def test_symlink_inside_the_workspace_is_followed(workspace: Path) -> None:
    (workspace / "real.txt").write_text("x")
    (workspace / "alias.txt").symlink_to(workspace / "real.txt")
    assert resolve_in_workspace(workspace, "alias.txt") == (workspace / "real.txt").resolve()


def test_symlinked_workspace_itself_works(tmp_path: Path, workspace: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(workspace, target_is_directory=True)
    (workspace / "a.txt").write_text("x")
    assert resolve_in_workspace(alias, "a.txt") == (workspace / "a.txt").resolve()


def test_symlink_loop_is_a_clear_error(workspace: Path) -> None:
    (workspace / "loop").symlink_to(workspace / "loop")
    with pytest.raises(ToolError, match="symlink loop"):
        resolve_in_workspace(workspace, "loop")


@pytest.mark.parametrize("path", ["", "a\x00b"])
def test_empty_and_nul_paths_are_refused(workspace: Path, path: str) -> None:
    with pytest.raises(ToolError):
        resolve_in_workspace(workspace, path)


async def test_read_file_through_symlink_to_outside_is_refused(
    workspace: Path, outside: Path
) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    result = await call_tool("read_file", workspace, path="link.txt")
    assert result.is_error
    assert "outside the workspace" in result.content
    assert "top secret" not in result.content


async def test_write_file_through_symlink_to_outside_is_refused(
    workspace: Path, outside: Path
) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    result = await call_tool("write_file", workspace, path="link.txt", content="pwned\n")
    assert result.is_error
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_write_file_into_symlinked_directory_is_refused(
    workspace: Path, outside: Path
) -> None:
    (workspace / "escape").symlink_to(outside, target_is_directory=True)
    result = await call_tool("write_file", workspace, path="escape/sub/new.txt", content="x")
    assert result.is_error
    assert "outside the workspace" in result.content
    assert not (outside / "sub").exists()


async def test_apply_diff_through_symlink_to_outside_is_refused(
    workspace: Path, outside: Path
) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    blocks = [{"search": "top secret", "replace": "public"}]
    result = await call_tool("apply_diff", workspace, path="link.txt", blocks=blocks)
    assert result.is_error
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_write_file_outside_by_dot_dot_is_refused(workspace: Path, tmp_path: Path) -> None:
    result = await call_tool("write_file", workspace, path="../escaped.txt", content="x")
    assert result.is_error
    assert "outside the workspace" in result.content
    assert not (tmp_path / "escaped.txt").exists()


async def test_list_and_search_refuse_outside_paths(workspace: Path, outside: Path) -> None:
    listed = await call_tool("list_files", workspace, path="..")
    searched = await call_tool("search_files", workspace, regex="secret", path=str(outside))
    assert listed.is_error and "outside the workspace" in listed.content
    assert searched.is_error and "outside the workspace" in searched.content


async def test_search_does_not_read_through_symlinks_to_outside(
    workspace: Path, outside: Path
) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    (workspace / "escape").symlink_to(outside, target_is_directory=True)
    result = await call_tool("search_files", workspace, regex="secret")
    assert not result.is_error
    assert "top secret" not in result.content
