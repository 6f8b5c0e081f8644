"""The `@` completion logic: which mention the cursor is in, the file index (ignored files
skipped, capped), fuzzy ranking and what a completion inserts."""

from __future__ import annotations

from pathlib import Path

from forge.tui.file_completion import FileIndex, completion_for, fuzzy_rank, mention_at


def test_mention_at_the_cursor() -> None:
    assert mention_at("look at @sr", 11) == (8, "sr")
    assert mention_at("@", 1) == (0, "")
    assert mention_at("(@a", 3) == (1, "a")
    assert mention_at('see @"my no', 11) == (4, "my no")
    assert mention_at('see @"my notes" ', 16) is None  # the quote is closed
    assert mention_at("@src/app.py now", 15) is None  # the mention is finished
    assert mention_at("ada@exa", 7) is None  # an e-mail address
    assert mention_at(r"\@lit", 5) is None  # escaped
    assert mention_at("no at sign", 5) is None
    assert mention_at("@abc def", 2) == (0, "a")  # only what is before the cursor counts


def test_completion_quotes_paths_with_spaces() -> None:
    assert completion_for("src/app.py") == "@src/app.py "
    assert completion_for("my notes.txt") == '@"my notes.txt" '


def test_fuzzy_rank_prefers_names_then_contiguous_then_short() -> None:
    files = (
        "src/app.py",
        "src/apple.txt",
        "lib/application/config.py",
        "tests/test_app.py",
        "docs/a_p_p.md",
        "readme.md",
    )
    assert fuzzy_rank("app", files)[:2] == ["src/app.py", "src/apple.txt"]
    assert "docs/a_p_p.md" in fuzzy_rank("app", files)  # a scattered match still counts
    assert "readme.md" not in fuzzy_rank("app", files)
    assert fuzzy_rank("APP.PY", files)[0] == "src/app.py"  # case is ignored
    assert fuzzy_rank("", files, limit=2) == ["readme.md", "src/app.py"]  # shallow first
    assert fuzzy_rank("zzz", files) == []


def test_index_skips_ignored_files_and_stops_at_its_cap(workspace: Path) -> None:
    (workspace / ".gitignore").write_text("node_modules/\n*.log\n", encoding="utf-8")
    for name in ("a.py", "b.py", "debug.log", "node_modules/x.js", "src/c.py", ".git/HEAD"):
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")
    index = FileIndex(workspace)
    assert index.needs_build() and not index.ready
    index.build()
    assert index.ready and not index.needs_build()
    assert sorted(index.files) == [".gitignore", "a.py", "b.py", "src/c.py"]
    assert not index.truncated
    capped = FileIndex(workspace, max_files=2)
    capped.build()
    assert len(capped.files) == 2 and capped.truncated


def test_index_of_a_missing_workspace_is_empty(tmp_path: Path) -> None:
    index = FileIndex(tmp_path / "gone")
    index.build()
    assert index.ready and index.files == ()
