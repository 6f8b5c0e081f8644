"""list_files: flat and recursive listings, .gitignore respected, .git skipped, capped."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.agent.tools.list_files import MAX_ENTRIES
from tests.agent.tools.support import call_tool


@pytest.fixture
def project(workspace: Path) -> Path:
    """A small project with a .gitignore, a nested .gitignore and a .git directory."""
    for name in [
        "README.md",
        "app.log",
        "keep.log",
        "src/main.py",
        "src/cache.tmp",
        "src/gen/out.py",
        "build/artifact.o",
        "docs/guide.md",
        "docs/draft.md",
        ".git/HEAD",
        "src/.git/nested",
    ]:
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
    (workspace / ".gitignore").write_text("*.log\n!keep.log\nbuild/\n*.tmp\n")
    (workspace / "docs" / ".gitignore").write_text("draft.md\n")
    (workspace / "src" / ".gitignore").write_text("gen/\n")
    return workspace


async def test_flat_listing(project: Path) -> None:
    result = await call_tool("list_files", project)
    assert result.content.splitlines() == [
        ".gitignore",
        "README.md",
        "docs/",
        "keep.log",
        "src/",
    ]


async def test_recursive_listing_respects_gitignore_files(project: Path) -> None:
    result = await call_tool("list_files", project, recursive=True)
    assert result.content.splitlines() == [
        ".gitignore",
        "README.md",
        "docs/",
        "docs/.gitignore",
        "docs/guide.md",
        "keep.log",
        "src/",
        "src/.gitignore",
        "src/main.py",
    ]


async def test_subdirectory_listing_applies_root_rules(project: Path) -> None:
    result = await call_tool("list_files", project, path="src", recursive=True)
    assert result.content.splitlines() == ["src/.gitignore", "src/main.py"]
    assert result.metadata["path"] == "src"


async def test_asking_for_an_ignored_directory_shows_it(project: Path) -> None:
    result = await call_tool("list_files", project, path="build")
    assert result.content.splitlines() == ["build/artifact.o"]


async def test_without_gitignore_everything_but_git_is_listed(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("")
    (workspace / "a.log").write_text("")
    result = await call_tool("list_files", workspace, recursive=True)
    assert result.content.splitlines() == ["a.log"]


async def test_git_info_exclude_is_respected(workspace: Path) -> None:
    (workspace / ".git" / "info").mkdir(parents=True)
    (workspace / ".git" / "info" / "exclude").write_text("secret.env\n")
    (workspace / "secret.env").write_text("")
    (workspace / "main.py").write_text("")
    result = await call_tool("list_files", workspace)
    assert result.content.splitlines() == ["main.py"]


async def test_listing_is_capped(workspace: Path) -> None:
    for index in range(MAX_ENTRIES + 37):
        (workspace / f"f{index:04d}.txt").write_text("")
    result = await call_tool("list_files", workspace)
    lines = result.content.splitlines()
    assert len(lines) == MAX_ENTRIES + 1
    assert lines[0] == "f0000.txt"
    assert lines[-1].startswith("... 37 more entries not shown")


async def test_symlinked_directories_are_listed_not_followed(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("")
    (workspace / "escape").symlink_to(outside, target_is_directory=True)
    result = await call_tool("list_files", workspace, recursive=True)
    assert result.content.splitlines() == ["escape"]


async def test_errors(workspace: Path) -> None:
    (workspace / "a.txt").write_text("")
    missing = await call_tool("list_files", workspace, path="nope")
    a_file = await call_tool("list_files", workspace, path="a.txt")
    assert missing.is_error and "does not exist" in missing.content
    assert a_file.is_error and "use read_file" in a_file.content


async def test_empty_directory(workspace: Path) -> None:
    result = await call_tool("list_files", workspace)
    assert not result.is_error
    assert "is empty" in result.content
