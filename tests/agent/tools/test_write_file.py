"""write_file: creates, replaces, makes parents, reports a diff; preview writes nothing."""

from __future__ import annotations

from pathlib import Path

from forge.agent.tools import ToolContext
from forge.agent.tools.write_file import WriteFileTool
from tests.agent.tools.support import call_tool


async def test_creates_a_file_with_parent_directories(workspace: Path) -> None:
    result = await call_tool("write_file", workspace, path="src/pkg/mod.py", content="x = 1\n")
    assert not result.is_error
    assert (workspace / "src/pkg/mod.py").read_text() == "x = 1\n"
    assert result.content.startswith("created src/pkg/mod.py")
    assert result.metadata["path"] == "src/pkg/mod.py"
    diff = result.metadata["diff"]
    assert "--- /dev/null" in diff and "+++ b/src/pkg/mod.py" in diff and "+x = 1" in diff


async def test_replaces_a_file_and_reports_the_diff(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    result = await call_tool("write_file", workspace, path="a.txt", content="one\nthree\n")
    assert (workspace / "a.txt").read_text() == "one\nthree\n"
    assert result.content == "updated a.txt (2 lines; +1 -1)"
    assert "-two\n+three\n" in result.metadata["diff"]


async def test_identical_content_changes_nothing(workspace: Path) -> None:
    (workspace / "a.txt").write_text("same\n")
    result = await call_tool("write_file", workspace, path="a.txt", content="same\n")
    assert not result.is_error
    assert "nothing changed" in result.content
    assert result.metadata["diff"] == ""


async def test_content_is_written_byte_for_byte(workspace: Path) -> None:
    content = "crlf\r\nunicode é ✓\nno final newline"
    await call_tool("write_file", workspace, path="b.txt", content=content)
    assert (workspace / "b.txt").read_bytes() == content.encode("utf-8")


async def test_missing_content_is_an_error_for_the_model(workspace: Path) -> None:
    result = await call_tool("write_file", workspace, path="a.txt")
    assert result.is_error
    assert "missing required argument 'content'" in result.content
    assert not (workspace / "a.txt").exists()


async def test_writing_a_directory_is_refused(workspace: Path) -> None:
    (workspace / "src").mkdir()
    result = await call_tool("write_file", workspace, path="src", content="x")
    assert result.is_error
    assert "is a directory" in result.content


def test_preview_shows_the_diff_without_writing(workspace: Path) -> None:
    (workspace / "a.txt").write_text("old\n")
    tool = WriteFileTool()
    context = ToolContext(workspace=workspace)
    preview = tool.preview({"path": "a.txt", "content": "new\n"}, context)
    assert "-old\n+new\n" in preview
    assert (workspace / "a.txt").read_text() == "old\n"
    fresh = tool.preview({"path": "new/b.txt", "content": "b\n"}, context)
    assert "+++ b/new/b.txt" in fresh
    assert not (workspace / "new").exists()


def test_preview_and_describe_never_raise(workspace: Path) -> None:
    tool = WriteFileTool()
    context = ToolContext(workspace=workspace)
    assert "outside the workspace" in tool.preview({"path": "../x", "content": "x"}, context)
    assert tool.preview({}, context)
    assert tool.describe({}) == "write_file: ?"
    assert tool.describe({"path": "a.py", "content": "1\n2\n"}) == "write_file: a.py (2 lines)"
