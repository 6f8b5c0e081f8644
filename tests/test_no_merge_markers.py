"""No tracked text file keeps a merge's conflict markers (two README sections once did)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKERS = ("<<<<<<< ", ">>>>>>> ")


def conflict_lines(root: Path) -> list[str]:
    """`path:line` of every line that starts a conflict marker in the tracked files."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
    ).stdout.split(b"\0")
    found = []
    for name in filter(None, listed):
        path = root / name.decode()
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if line.startswith(MARKERS):
                found.append(f"{name.decode()}:{number}")
    return found


def test_no_tracked_file_has_conflict_markers() -> None:
    assert conflict_lines(ROOT) == []


def test_the_check_sees_a_marker(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "a.md").write_text("one\n<<<<<<< HEAD\ntwo\n=======\nthree\n>>>>>>> other\n")
    subprocess.run(["git", "add", "a.md"], cwd=tmp_path, check=True)
    assert conflict_lines(tmp_path) == ["a.md:2", "a.md:6"]
