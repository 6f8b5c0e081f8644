"""write_file: creates, replaces what the model has read, makes parents, reports a diff;
refuses a file changed since the model read it; preview writes nothing."""

from __future__ import annotations

import os
from pathlib import Path

from forge.agent.tools.base import ToolContext
from forge.agent.tools.read_ledger import FileReadLedger
from forge.agent.tools.registry import default_registry
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
    session = default_registry()
    await call_tool("read_file", workspace, registry=session, path="a.txt")
    result = await call_tool(
        "write_file", workspace, registry=session, path="a.txt", content="one\nthree\n"
    )
    assert (workspace / "a.txt").read_text() == "one\nthree\n"
    assert result.content == "updated a.txt (2 lines; +1 -1)"
    assert "-two\n+three\n" in result.metadata["diff"]


async def test_identical_content_changes_nothing(workspace: Path) -> None:
    (workspace / "a.txt").write_text("same\n")
    session = default_registry()
    await call_tool("read_file", workspace, registry=session, path="a.txt")
    result = await call_tool(
        "write_file", workspace, registry=session, path="a.txt", content="same\n"
    )
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
    ledger = FileReadLedger()
    ledger.record((workspace / "a.txt").resolve(), b"old\n")
    tool = WriteFileTool(ledger)
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


async def test_an_existing_file_never_read_is_not_overwritten(workspace: Path) -> None:
    (workspace / "notes.md").write_text("the user's notes\n")
    result = await call_tool("write_file", workspace, path="notes.md", content="model text\n")
    assert result.is_error
    assert "has not been read" in result.content and "read_file" in result.content
    assert (workspace / "notes.md").read_text() == "the user's notes\n"


async def test_a_file_changed_since_the_model_read_it_is_not_overwritten(
    workspace: Path,
) -> None:
    target = workspace / "app.py"
    target.write_text("x = 1\n")
    session = default_registry()
    await call_tool("read_file", workspace, registry=session, path="app.py")
    target.write_text("x = 1\ny = 2  # the user's edit\n")  # meanwhile, in the editor

    refused = await call_tool(
        "write_file", workspace, registry=session, path="app.py", content="x = 3\n"
    )
    assert refused.is_error
    assert "changed since you last read it" in refused.content
    assert "read it again" in refused.content
    assert target.read_text() == "x = 1\ny = 2  # the user's edit\n"

    # Reading again makes the write possible, and the write is then the new "last seen".
    await call_tool("read_file", workspace, registry=session, path="app.py")
    written = await call_tool(
        "write_file", workspace, registry=session, path="app.py", content="x = 3\n"
    )
    assert not written.is_error
    again = await call_tool(
        "write_file", workspace, registry=session, path="app.py", content="x = 4\n"
    )
    assert not again.is_error and target.read_text() == "x = 4\n"


async def test_apply_diff_keeps_the_record_current(workspace: Path) -> None:
    target = workspace / "a.py"
    target.write_text("a = 1\n")
    session = default_registry()
    await call_tool("read_file", workspace, registry=session, path="a.py")
    edited = await call_tool(
        "apply_diff",
        workspace,
        registry=session,
        path="a.py",
        blocks=[{"search": "a = 1", "replace": "a = 2"}],
    )
    assert not edited.is_error
    written = await call_tool(
        "write_file", workspace, registry=session, path="a.py", content="a = 3\n"
    )
    assert not written.is_error and target.read_text() == "a = 3\n"


async def test_writing_to_a_fifo_is_refused_without_blocking(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    result = await call_tool("write_file", workspace, path="pipe", content="x")
    assert result.is_error
    assert "FIFO" in result.content


def test_the_result_counts_one_line_in_the_singular(tmp_path: Path) -> None:
    from forge.agent.tools.write_file import _lines

    assert (_lines(1), _lines(2), _lines(0)) == ("1 line", "2 lines", "0 lines")
