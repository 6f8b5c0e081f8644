"""apply_diff: exact, unique search blocks; precise errors; all-or-nothing; diff metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.agent.tools.apply_diff import ApplyDiffTool
from forge.agent.tools.base import ToolContext
from tests.agent.tools.support import call_tool

SOURCE = """def add(a, b):
    return a + b


def sub(a, b):
    return a - b
"""


def text_of(path: Path) -> str:
    """The file's text (a plain helper: the check reads a file, not the event loop's business)."""
    return path.read_text()


@pytest.fixture
def module(workspace: Path) -> Path:
    path = workspace / "calc.py"
    path.write_text(SOURCE)
    return path


async def test_applies_blocks_in_order(workspace: Path, module: Path) -> None:
    blocks = [
        {"search": "    return a + b", "replace": "    return b + a"},
        {"search": "def sub(a, b):", "replace": "def subtract(a, b):"},
    ]
    result = await call_tool("apply_diff", workspace, path="calc.py", blocks=blocks)
    assert not result.is_error, result.content
    assert result.content == "applied 2 blocks to calc.py (+2 -2)"
    text = text_of(module)
    assert "return b + a" in text and "def subtract(a, b):" in text
    assert "-def sub(a, b):\n+def subtract(a, b):" in result.metadata["diff"]
    assert result.metadata["path"] == "calc.py"


async def test_later_blocks_see_earlier_edits(workspace: Path, module: Path) -> None:
    blocks = [
        {"search": "def add", "replace": "def plus"},
        {"search": "def plus(a, b):", "replace": "def plus(a, b):  # renamed"},
    ]
    result = await call_tool("apply_diff", workspace, path="calc.py", blocks=blocks)
    assert not result.is_error, result.content
    assert "def plus(a, b):  # renamed" in text_of(module)


async def test_zero_matches_names_the_block(workspace: Path, module: Path) -> None:
    blocks = [
        {"search": "def add(a, b):", "replace": "def add(x, y):"},
        {"search": "def mul(a, b):", "replace": "def times(a, b):"},
    ]
    result = await call_tool("apply_diff", workspace, path="calc.py", blocks=blocks)
    assert result.is_error
    assert "block 2: search text matched 0 times" in result.content
    assert "block 1" not in result.content
    assert "no changes were made to calc.py" in result.content
    assert text_of(module) == SOURCE


async def test_two_matches_names_the_count(workspace: Path, module: Path) -> None:
    blocks = [{"search": "(a, b):", "replace": "(x, y):"}]
    result = await call_tool("apply_diff", workspace, path="calc.py", blocks=blocks)
    assert result.is_error
    assert "block 1: search text matched 2 times; it must match exactly once" in result.content
    assert text_of(module) == SOURCE


async def test_overlapping_matches_are_ambiguous_too(workspace: Path) -> None:
    """Three equal lines hold a two-line search twice (overlapping): which pair is meant?"""
    path = workspace / "conf.py"
    path.write_text("x = 1\nx = 1\nx = 1\n")
    blocks = [{"search": "x = 1\nx = 1\n", "replace": "x = 2\n"}]
    result = await call_tool("apply_diff", workspace, path="conf.py", blocks=blocks)
    assert result.is_error
    assert "block 1: search text matched 2 times" in result.content
    assert text_of(path) == "x = 1\nx = 1\nx = 1\n"


async def test_all_or_nothing(workspace: Path, module: Path) -> None:
    """Two valid blocks and one failing block: the file is left exactly as it was."""
    blocks = [
        {"search": "return a + b", "replace": "return 0"},
        # Twice in the original, but once after block 1: valid in order.
        {"search": "return a", "replace": "return 1"},
        {"search": "no such text", "replace": "x"},
    ]
    result = await call_tool("apply_diff", workspace, path="calc.py", blocks=blocks)
    assert result.is_error
    assert "block 3: search text matched 0 times" in result.content
    assert text_of(module) == SOURCE


async def test_whitespace_mismatch_gets_a_hint(workspace: Path, module: Path) -> None:
    blocks = [{"search": "def add(a, b):\n  return a + b", "replace": "x"}]
    result = await call_tool("apply_diff", workspace, path="calc.py", blocks=blocks)
    assert result.is_error
    assert "whitespace must match exactly" in result.content


async def test_crlf_file_accepts_lf_blocks_and_stays_crlf(workspace: Path) -> None:
    path = workspace / "w.txt"
    path.write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    blocks = [{"search": "alpha\nbeta\n", "replace": "alpha\nBETA\n"}]
    result = await call_tool("apply_diff", workspace, path="w.txt", blocks=blocks)
    assert not result.is_error, result.content
    assert path.read_bytes() == b"alpha\r\nBETA\r\ngamma\r\n"


async def test_missing_file_empty_search_and_bad_blocks(workspace: Path, module: Path) -> None:
    missing = await call_tool(
        "apply_diff", workspace, path="nope.py", blocks=[{"search": "a", "replace": "b"}]
    )
    empty = await call_tool(
        "apply_diff", workspace, path="calc.py", blocks=[{"search": "", "replace": "b"}]
    )
    no_replace = await call_tool("apply_diff", workspace, path="calc.py", blocks=[{"search": "a"}])
    none = await call_tool("apply_diff", workspace, path="calc.py", blocks=[])
    assert missing.is_error and "does not exist" in missing.content
    assert empty.is_error and "block 1: search text is empty" in empty.content
    assert no_replace.is_error and "missing required argument 'blocks[0].replace'" in (
        no_replace.content
    )
    assert none.is_error and "non-empty list" in none.content
    assert text_of(module) == SOURCE


async def test_non_utf8_file_is_refused(workspace: Path) -> None:
    (workspace / "latin.txt").write_bytes(b"caf\xe9\n")
    blocks = [{"search": "caf", "replace": "tea"}]
    result = await call_tool("apply_diff", workspace, path="latin.txt", blocks=blocks)
    assert result.is_error and "not UTF-8" in result.content
    assert (workspace / "latin.txt").read_bytes() == b"caf\xe9\n"


def test_preview_shows_the_diff_or_the_failure_without_writing(
    workspace: Path, module: Path
) -> None:
    tool = ApplyDiffTool()
    context = ToolContext(workspace=workspace)
    good = tool.preview(
        {"path": "calc.py", "blocks": [{"search": "a + b", "replace": "a+b"}]}, context
    )
    bad = tool.preview({"path": "calc.py", "blocks": [{"search": "zzz", "replace": ""}]}, context)
    assert "-    return a + b\n+    return a+b" in good
    assert bad.startswith("cannot preview:") and "matched 0 times" in bad
    assert tool.preview({}, context).startswith("cannot preview:")
    assert text_of(module) == SOURCE
    assert tool.describe({"path": "calc.py", "blocks": [{}]}) == "apply_diff: calc.py (1 block)"
