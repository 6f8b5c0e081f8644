"""The pure mappings of `forge acp`: prompt blocks to a message, unified diffs to ACP diffs,
and which received lines the transport answers as malformed."""

from __future__ import annotations

from pathlib import Path

from acp import text_block
from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextResourceContents,
)

from forge.acp.file_diffs import file_diff
from forge.acp.prompt_text import prompt_text
from forge.acp.transport import INVALID_REQUEST, PARSE_ERROR, malformed_reply
from forge.acp.updates import markdown_lines
from forge.agent.tools.diffs import unified_diff


def test_a_workspace_file_link_becomes_a_mention_and_an_embedded_buffer_is_included(
    tmp_path: Path,
) -> None:
    workspace = tmp_path.resolve()
    (workspace / "src").mkdir()
    blocks = [
        text_block("Explain"),
        ResourceContentBlock(type="resource_link", uri=f"file://{workspace}/src/app.py", name="a"),
        ResourceContentBlock(type="resource_link", uri="file:///etc/hosts", name="h"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri="file:///unsaved.py", text="x = 1"),
        ),
    ]
    text = prompt_text(blocks, workspace)
    assert text.startswith("Explain @src/app.py file:///etc/hosts")
    assert "[file:///unsaved.py]\nx = 1" in text


def test_an_edit_is_one_whole_file_diff_placed_by_its_lines(tmp_path: Path) -> None:
    old = "".join(f"line {n}\n" for n in range(1, 21))
    new = old.replace("line 2\n", "line two\n").replace("line 15\n", "line 15\nadded\n")
    unified = unified_diff(old, new, "f.txt")
    target = tmp_path / "f.txt"
    target.write_text(old)  # an approval's preview: the file is still the old one
    preview = file_diff(target, unified, edited=False)
    target.write_text(new)  # the finished edit: the file is the new one
    finished = file_diff(target, unified, edited=True)

    for edit in (preview, finished):
        [diff] = edit.contents  # one diff for the file, not one per hunk
        assert (diff.old_text, diff.new_text, diff.path) == (old, new, str(target))
        assert [location.line for location in edit.locations] == [1, 15]  # zero-based


def test_a_changed_file_gets_located_hunks_and_a_new_file_empty_old_text(
    tmp_path: Path,
) -> None:
    unified = (
        "--- a/f.txt\n+++ b/f.txt\n"
        "@@ -1,2 +1,2 @@\n keep\n-old\n+new\n"
        "@@ -9 +9,2 @@\n-gone\n+one\n+two\n"
    )
    target = tmp_path / "f.txt"
    target.write_text("edited since\n")  # a replay of an old session: no longer matches
    edit = file_diff(target, unified, edited=True)
    first, second = edit.contents
    assert (first.old_text, first.new_text) == ("keep\nold\n", "keep\nnew\n")
    assert (second.old_text, second.new_text) == ("gone\n", "one\ntwo\n")
    assert [location.line for location in edit.locations] == [1, 8]
    created = file_diff(
        tmp_path / "new.txt", unified_diff("", "a\nb\n", "new.txt", existed=False), edited=True
    )
    [diff] = created.contents
    assert diff.old_text == "" and diff.new_text == "a\nb\n"  # empty, not null (Toad)
    [empty] = file_diff(tmp_path / "e.txt", "--- /dev/null\n+++ b/e.txt\n", edited=True).contents
    assert empty.old_text == "" and empty.new_text == ""


def test_the_transport_answers_only_lines_that_are_not_messages() -> None:
    assert malformed_reply(b'{"jsonrpc":"2.0","id":1,"method":"initialize"}\n') is None
    assert malformed_reply(b'{"jsonrpc":"2.0","method":"session/cancel"}\n') is None
    assert malformed_reply(b'{"jsonrpc":"2.0","id":3,"result":{}}\n') is None
    parse = malformed_reply(b"{nope\n")
    assert parse is not None and parse["error"]["code"] == PARSE_ERROR and parse["id"] is None
    for line in (b"[1]\n", b"42\n", b'{"method": 5}\n', b'{"params": {}}\n'):
        reply = malformed_reply(line)
        assert reply is not None and reply["error"]["code"] == INVALID_REQUEST
    long = malformed_reply(b"x" * 1000 + b"\n")
    assert long is not None and len(long["error"]["data"]["received"]) == 200


def test_plain_lines_become_markdown_hard_breaks_and_blank_lines_stay() -> None:
    assert markdown_lines("one\ntwo\n\nthree\n") == "one  \ntwo\n\nthree\n"
    assert markdown_lines("single") == "single"
