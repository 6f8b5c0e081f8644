"""The tools rows of the fault matrix not held elsewhere: 100 MB of command output, bytes that
are not UTF-8 from a command, binary and non-UTF-8 files through every file tool, and a
command that waits for input (stdin is closed). Process-group kills on timeout and
cancellation are in test_execute_command.py; FIFOs and catastrophic patterns in
test_tool_hangs.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

from forge.agent.tools.execute_command import HEAD_CHARACTERS, TAIL_CHARACTERS
from forge.agent.tools.registry import default_registry
from tests.agent.tools.support import call_tool

DEADLINE = 120.0


async def test_100_mb_of_output_is_cut_to_head_and_tail(workspace: Path) -> None:
    streamed = 0

    def on_output(text: str) -> None:
        nonlocal streamed
        streamed += len(text)

    command = "head -c 100000000 /dev/zero | tr '\\0' 'a'; echo; echo THE-END"
    result = await asyncio.wait_for(
        call_tool("execute_command", workspace, command=command, on_output=on_output), DEADLINE
    )
    assert result.exit_code == 0 and not result.is_error
    assert streamed >= 100_000_000  # every byte went by …
    assert len(result.content) < HEAD_CHARACTERS + TAIL_CHARACTERS + 500  # … little was kept
    assert result.metadata["output_truncated"]
    assert result.content.startswith("a" * 100)
    assert result.content.endswith("THE-END\n[exit code 0]")


async def test_output_that_is_not_utf8_is_replaced_not_fatal(workspace: Path) -> None:
    result = await call_tool(
        "execute_command", workspace, command="printf 'bad \\377\\376 bytes\\n\\000nul\\n'"
    )
    assert result.exit_code == 0
    assert result.content == "bad \ufffd\ufffd bytes\n\x00nul\n[exit code 0]"


async def test_a_command_reading_stdin_gets_end_of_file_at_once(workspace: Path) -> None:
    result = await asyncio.wait_for(
        call_tool("execute_command", workspace, command="read line; echo read=$? line=$line"),
        DEADLINE,
    )
    assert result.content == "read=1 line=\n[exit code 0]"


async def test_binary_and_non_utf8_files_through_every_file_tool(workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"needle\x00\xff\xfe" * 10)
    (workspace / "latin1.txt").write_bytes(b"caf\xe9 needle\n")
    session = default_registry()

    binary = await call_tool("read_file", workspace, registry=session, path="blob.bin")
    assert binary.is_error and "binary file" in binary.content
    latin = await call_tool("read_file", workspace, registry=session, path="latin1.txt")
    assert not latin.is_error and "caf\ufffd needle" in latin.content

    found = await call_tool("search_files", workspace, regex="needle")
    assert found.content == "latin1.txt:1: caf\ufffd needle"  # the binary file is skipped

    edit = await call_tool(
        "apply_diff",
        workspace,
        registry=session,
        path="latin1.txt",
        blocks=[{"search": "needle", "replace": "pin"}],
    )
    assert edit.is_error and "not UTF-8" in edit.content
    assert (workspace / "latin1.txt").read_bytes() == b"caf\xe9 needle\n"

    # Replacing a binary file the model never read is refused; the bytes stay.
    overwrite = await call_tool("write_file", workspace, path="blob.bin", content="text")
    assert overwrite.is_error
    assert (workspace / "blob.bin").read_bytes() == b"needle\x00\xff\xfe" * 10
