"""search_files: regex over files, include globs, .gitignore respected, capped, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.agent.tools.search_files import MAX_MATCHES
from tests.agent.tools.support import call_tool


@pytest.fixture
def project(workspace: Path) -> Path:
    files = {
        "src/app.py": "import os\n\ndef main():\n    return os.getcwd()\n",
        "src/util.py": "def helper():\n    pass\n",
        "src/notes.txt": "def is not python here\n",
        "vendor/lib.py": "def vendored():\n    pass\n",
        ".git/config": "def in git\n",
        "blob.bin": "def \x00 binary",
    }
    for name, text in files.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (workspace / ".gitignore").write_text("vendor/\n")
    return workspace


async def test_finds_matching_lines_with_file_and_line(project: Path) -> None:
    result = await call_tool("search_files", project, regex=r"^def \w+\(")
    assert result.content.splitlines() == [
        "src/app.py:3: def main():",
        "src/util.py:1: def helper():",
    ]


async def test_include_glob_narrows_files(project: Path) -> None:
    result = await call_tool("search_files", project, regex="def", include="*.txt")
    assert result.content.splitlines() == ["src/notes.txt:1: def is not python here"]
    nested = await call_tool("search_files", project, regex="def", include="src/**/util.py")
    assert nested.content.splitlines() == ["src/util.py:1: def helper():"]


async def test_path_narrows_the_search_and_may_be_a_file(project: Path) -> None:
    result = await call_tool("search_files", project, regex="def", path="src/util.py")
    assert result.content.splitlines() == ["src/util.py:1: def helper():"]


async def test_ignored_git_and_binary_files_are_skipped(project: Path) -> None:
    result = await call_tool("search_files", project, regex="def")
    assert "vendor/" not in result.content
    assert ".git/" not in result.content
    assert "blob.bin" not in result.content
    named = await call_tool("search_files", project, regex="def", path="vendor")
    assert named.content.splitlines() == ["vendor/lib.py:1: def vendored():"]


async def test_no_matches(project: Path) -> None:
    result = await call_tool("search_files", project, regex="zebra")
    assert not result.is_error
    assert result.content == "no matches for /zebra/ in ."


async def test_invalid_regex_is_a_clear_error(project: Path) -> None:
    result = await call_tool("search_files", project, regex="def (")
    assert result.is_error
    assert result.content.startswith("invalid regex 'def (':")
    assert "missing )" in result.content


async def test_matches_are_capped(workspace: Path) -> None:
    (workspace / "many.txt").write_text("hit\n" * (MAX_MATCHES + 50))
    result = await call_tool("search_files", workspace, regex="hit")
    lines = result.content.splitlines()
    assert len(lines) == MAX_MATCHES + 1
    assert lines[-1].startswith("... 50 more matches not shown")


async def test_missing_path_is_an_error(workspace: Path) -> None:
    result = await call_tool("search_files", workspace, regex="x", path="nope")
    assert result.is_error and "does not exist" in result.content
