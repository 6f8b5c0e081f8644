"""read_file: numbered lines, ranges, head + tail for large files, binary refused."""

from __future__ import annotations

from pathlib import Path

from forge.agent.tools.read_file import MAX_LINE_CHARACTERS
from tests.agent.tools.support import call_tool


async def test_reads_with_line_numbers(workspace: Path) -> None:
    (workspace / "hello.py").write_text("import os\n\nprint('hi')\n")
    result = await call_tool("read_file", workspace, path="hello.py")
    assert not result.is_error
    assert result.content.splitlines() == [
        "hello.py (lines 1-3 of 3)",
        "1 | import os",
        "2 | ",
        "3 | print('hi')",
    ]
    assert result.metadata["path"] == "hello.py"


async def test_reads_a_range(workspace: Path) -> None:
    (workspace / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    result = await call_tool("read_file", workspace, path="n.txt", start_line=9, end_line=11)
    assert result.content.splitlines() == [
        "n.txt (lines 9-11 of 20)",
        " 9 | line 9",
        "10 | line 10",
        "11 | line 11",
    ]


async def test_end_line_past_the_end_is_clamped(workspace: Path) -> None:
    (workspace / "n.txt").write_text("a\nb\nc\n")
    result = await call_tool("read_file", workspace, path="n.txt", start_line=2, end_line=99)
    assert result.content.splitlines()[1:] == ["2 | b", "3 | c"]


async def test_range_numbers_sent_as_strings_are_accepted(workspace: Path) -> None:
    (workspace / "n.txt").write_text("a\nb\nc\n")
    result = await call_tool("read_file", workspace, path="n.txt", start_line="2", end_line="2")
    assert result.content.splitlines()[1:] == ["2 | b"]


async def test_bad_ranges_are_clear_errors(workspace: Path) -> None:
    (workspace / "n.txt").write_text("a\nb\nc\n")
    past = await call_tool("read_file", workspace, path="n.txt", start_line=10)
    backwards = await call_tool("read_file", workspace, path="n.txt", start_line=3, end_line=2)
    zero = await call_tool("read_file", workspace, path="n.txt", start_line=0)
    assert past.is_error and "past the end" in past.content and "3 lines" in past.content
    assert backwards.is_error and "before start_line" in backwards.content
    assert zero.is_error and "numbered from 1" in zero.content


async def test_crlf_lines_are_shown_without_carriage_returns(workspace: Path) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await call_tool("read_file", workspace, path="w.txt")
    assert result.content.splitlines()[1:] == ["1 | one", "2 | two"]
    assert "\r" not in result.content


async def test_large_file_returns_head_and_tail(workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 5001)))
    result = await call_tool("read_file", workspace, path="big.txt")
    lines = result.content.splitlines()
    assert lines[0] == "big.txt (lines 1-5000 of 5000)"
    assert lines[1] == "   1 | row 1"
    assert lines[-1] == "5000 | row 5000"
    markers = [line for line in lines if line.startswith("[...")]
    assert markers == ["[... 3000 lines elided; read them with start_line/end_line ...]"]
    assert "row 2500" not in result.content


async def test_file_over_the_character_budget_is_cut_too(workspace: Path) -> None:
    # Few lines, but ~400 KB: the character budget, not the line budget, triggers the cut.
    (workspace / "wide.txt").write_text("".join(f"{i} " + "x" * 1000 + "\n" for i in range(400)))
    result = await call_tool("read_file", workspace, path="wide.txt")
    assert "lines elided" in result.content
    assert len(result.content) < 120_000
    assert result.content.splitlines()[-1].startswith("400 | 399 ")


async def test_elided_middle_can_be_read_by_range(workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 5001)))
    result = await call_tool("read_file", workspace, path="big.txt", start_line=2500, end_line=2501)
    assert result.content.splitlines()[1:] == ["2500 | row 2500", "2501 | row 2501"]


async def test_very_long_lines_are_shortened(workspace: Path) -> None:
    (workspace / "min.js").write_text("a" * (MAX_LINE_CHARACTERS + 500) + "\n")
    result = await call_tool("read_file", workspace, path="min.js")
    assert "[line truncated: 500 more characters]" in result.content


async def test_binary_file_is_refused(workspace: Path) -> None:
    (workspace / "data.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(100))
    result = await call_tool("read_file", workspace, path="data.bin")
    assert result.is_error
    assert "binary file" in result.content


async def test_a_broken_image_is_refused_saying_so(workspace: Path) -> None:
    (workspace / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(100))
    result = await call_tool("read_file", workspace, path="image.png")
    assert result.is_error and not result.images
    assert result.content.startswith("'image.png' is not a readable image")
    assert "0x" not in result.content  # no object address in what the model reads


async def test_missing_file_and_directory_are_clear_errors(workspace: Path) -> None:
    (workspace / "src").mkdir()
    missing = await call_tool("read_file", workspace, path="nope.txt")
    directory = await call_tool("read_file", workspace, path="src")
    assert missing.is_error and "does not exist" in missing.content
    assert directory.is_error and "is a directory" in directory.content


async def test_empty_file(workspace: Path) -> None:
    (workspace / "empty.txt").write_text("")
    result = await call_tool("read_file", workspace, path="empty.txt")
    assert not result.is_error
    assert result.content == "empty.txt is empty"


async def test_invalid_utf8_is_read_with_replacement(workspace: Path) -> None:
    (workspace / "latin.txt").write_bytes(b"caf\xe9\n")
    result = await call_tool("read_file", workspace, path="latin.txt")
    assert not result.is_error
    assert "1 | caf\ufffd" in result.content
