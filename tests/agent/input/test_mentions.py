"""`@path` mentions: parsing (ranges, quotes, e-mails, escapes, code fences) and expansion with
real files in a temporary workspace (caps, ranges, refusal outside, ignored files, problems)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forge.agent.input.mentions import (
    MAX_ATTACH_BYTES,
    Mention,
    expand_mentions,
    has_mentions,
    parse_mentions,
)
from forge.llm.tokenizer import TiktokenCounter

COUNTER = TiktokenCounter("gpt-4o")


def mentions(text: str) -> list[tuple[str, int | None, int | None]]:
    return [(m.path, m.start_line, m.end_line) for m in parse_mentions(text).mentions]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("look at @src/app.py please", [("src/app.py", None, None)]),
        ("@src/app.py:40-80", [("src/app.py", 40, 80)]),
        ("@a.py:7", [("a.py", 7, 7)]),
        ("@a.py:7-", [("a.py", 7, None)]),
        ("see @a.py, then @b/c.txt.", [("a.py", None, None), ("b/c.txt", None, None)]),
        ("fix @a.py: it fails", [("a.py", None, None)]),
        ("(@lib/x.py) and [@y.md]", [("lib/x.py", None, None), ("y.md", None, None)]),
        ('read @"my notes.txt" now', [("my notes.txt", None, None)]),
        ('@"a b.txt":3-4', [("a b.txt", 3, 4)]),
        ("line one\n@next/line.py", [("next/line.py", None, None)]),
    ],
)
def test_parse_finds_paths_and_line_ranges(
    text: str, expected: list[tuple[str, int | None, int | None]]
) -> None:
    assert mentions(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "mail me at ada@example.com",
        "user@host:22 is the server",
        "a lone @ sign",
        "trailing @",
        "@.,;",
        "```\n@dataclass\nclass A: ...\n```",
        "~~~python\n@app.route('/')\n~~~",
    ],
)
def test_parse_ignores_emails_bare_signs_and_code_fences(text: str) -> None:
    assert mentions(text) == []
    assert parse_mentions(text).text == text


def test_escaped_at_is_a_literal_at_without_its_backslash() -> None:
    parsed = parse_mentions(r"type \@a.py literally, attach @b.py")
    assert [m.path for m in parsed.mentions] == ["b.py"]
    assert parsed.text == "type @a.py literally, attach @b.py"
    assert has_mentions(r"\@x")
    assert not has_mentions("ada@example.com")


def test_mention_spans_and_labels() -> None:
    text = 'see @src/a.py:1-2, and @"x y":3.'
    found = parse_mentions(text).mentions
    assert [text[m.span[0] : m.span[1]] for m in found] == ["@src/a.py:1-2", '@"x y":3']
    assert [m.label for m in found] == ["@src/a.py:1-2", '@"x y":3']
    assert Mention("a.py", 5, None).label == "@a.py:5-"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def expand(text: str, workspace: Path, limit: int = 4000):  # type: ignore[no-untyped-def]
    return expand_mentions(text, workspace, counter=COUNTER, limit_tokens=limit)


def test_a_mentioned_file_follows_the_message_numbered(workspace: Path) -> None:
    write(workspace / "src" / "app.py", "".join(f"line {n}\n" for n in range(1, 11)))
    expansion = expand("explain @src/app.py", workspace)
    assert expansion.text.startswith("explain @src/app.py\n\n")
    assert '<attached_file path="src/app.py" lines="1-10" total_lines="10">' in expansion.text
    assert " 1 | line 1\n" in expansion.text and "10 | line 10\n</attached_file>" in expansion.text
    [attachment] = expansion.attachments
    assert attachment.tokens == COUNTER.count_text(attachment.block)
    assert attachment.describe() == f"attached src/app.py (10 lines, {attachment.tokens} tokens)"
    assert expansion.problems == ()


def test_a_line_range_attaches_only_those_lines(workspace: Path) -> None:
    write(workspace / "app.py", "".join(f"row {n}\n" for n in range(1, 101)))
    expansion = expand("@app.py:40-42 and @app.py:99-", workspace)
    first, second = expansion.attachments
    assert (first.first_line, first.last_line, first.total_lines) == (40, 42, 100)
    assert "40 | row 40\n41 | row 41\n42 | row 42\n</attached_file>" in first.block
    assert "row 39" not in first.block and "row 43" not in first.block
    assert first.describe().startswith("attached app.py (lines 40-42, ")
    assert (second.first_line, second.last_line) == (99, 100)


def test_a_big_file_is_cut_to_head_and_tail_within_the_limit(workspace: Path) -> None:
    write(workspace / "big.txt", "".join(f"entry number {n}\n" for n in range(5000)))
    expansion = expand("@big.txt", workspace, limit=500)
    [attachment] = expansion.attachments
    assert attachment.capped
    assert attachment.tokens <= 500 + 40  # the block's tags on top of the capped body
    assert "entry number 0\n" in attachment.block and "entry number 4999\n" in attachment.block
    assert "entry number 2500\n" not in attachment.block
    assert "elided" in attachment.block and "read_file" in attachment.block
    assert "cut to head and tail" in attachment.describe()


def test_all_attachments_together_are_bounded(workspace: Path) -> None:
    for name in "abcd":
        write(workspace / f"{name}.txt", "".join(f"{name} {n}\n" for n in range(3000)))
    expansion = expand("@a.txt @b.txt @c.txt @d.txt", workspace, limit=600)
    assert sum(a.tokens for a in expansion.attachments) <= 2 * 600 + 100
    assert [a.path for a in expansion.attachments] == ["a.txt", "b.txt"]
    assert len(expansion.problems) == 2
    assert expansion.problems[0].startswith("@c.txt not attached: the files attached before it")


def test_outside_the_workspace_is_refused(workspace: Path, tmp_path: Path) -> None:
    write(tmp_path / "secret.txt", "top secret")
    (workspace / "link").symlink_to(tmp_path / "secret.txt")
    expansion = expand("@../secret.txt @link @/etc/hostname", workspace)
    assert expansion.attachments == ()
    assert "top secret" not in expansion.text
    assert [p.split(":")[0] for p in expansion.problems] == [
        "@../secret.txt not attached",
        "@link not attached",
        "@/etc/hostname not attached",
    ]
    assert all("outside the workspace" in problem for problem in expansion.problems)
    assert expansion.text == "@../secret.txt @link @/etc/hostname"


def test_missing_files_are_reported_and_the_text_kept(workspace: Path) -> None:
    expansion = expand("fix @src/missing.py and thank @alice for @property", workspace)
    assert expansion.text == "fix @src/missing.py and thank @alice for @property"
    assert expansion.attachments == ()
    # Only the path-like mention is a problem; "@alice" and "@property" are plain words.
    assert expansion.problems == (
        "@src/missing.py not attached: no file 'src/missing.py' in the workspace",
    )


def test_directories_binary_files_bad_ranges_and_huge_files_are_not_attached(
    workspace: Path,
) -> None:
    (workspace / "pkg").mkdir()
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02")
    write(workspace / "short.txt", "one\ntwo\n")
    with open(workspace / "huge.log", "wb") as file:
        file.truncate(MAX_ATTACH_BYTES + 1)
    expansion = expand("@pkg/ @blob.bin @short.txt:5-6 @huge.log", workspace)
    assert expansion.attachments == ()
    problems = "\n".join(expansion.problems)
    assert "@pkg/ not attached: 'pkg' is a directory" in problems
    assert "@blob.bin not attached: 'blob.bin' is a binary file" in problems
    assert "@short.txt:5-6 not attached: start_line 5 is past the end" in problems
    assert f"more than the {MAX_ATTACH_BYTES:,}" in problems


def test_an_ignored_file_is_attached_when_named(workspace: Path) -> None:
    write(workspace / ".gitignore", "build/\n*.log\n")
    write(workspace / "build" / "out.log", "generated\n")
    expansion = expand("@build/out.log", workspace)
    assert [a.path for a in expansion.attachments] == ["build/out.log"]


def test_quoted_paths_with_spaces_and_duplicates(workspace: Path) -> None:
    write(workspace / "my notes.txt", "remember\n")
    expansion = expand('@"my notes.txt" and again @"my notes.txt"', workspace)
    assert [a.path for a in expansion.attachments] == ["my notes.txt"]
    assert '<attached_file path="my notes.txt"' in expansion.text


def test_empty_file(workspace: Path) -> None:
    write(workspace / "empty.txt", "")
    [attachment] = expand("@empty.txt", workspace).attachments
    assert attachment.total_lines == 0 and "(empty)" in attachment.block
    assert attachment.describe().startswith("attached empty.txt (0 lines, ")


def test_no_mentions_leaves_the_text_alone(workspace: Path) -> None:
    text = "nothing to attach, ada@example.com"
    assert expand(text, workspace).text == text
    assert os.listdir(workspace) == []


def test_split_attachments_recovers_what_was_typed(workspace: Path) -> None:
    write(workspace / "a.py", "x = 1\ny = 2\n")
    write(workspace / "b.md", "</attached_file> inside a file\n")
    expansion = expand("look @a.py:2 and @b.md", workspace)
    from forge.agent.input.mentions import split_attachments

    assert split_attachments(expansion.text) == (
        "look @a.py:2 and @b.md",
        ["attached a.py (line 2)", "attached b.md (line 1)"],
    )
    assert split_attachments("plain text") == ("plain text", [])


def test_an_unreadable_file_is_reported(workspace: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    locked = write(workspace / "locked.txt", "no\n")
    locked.chmod(0)
    expansion = expand("@locked.txt", workspace)
    assert expansion.attachments == ()
    assert "@locked.txt not attached: cannot read 'locked.txt'" in expansion.problems[0]
