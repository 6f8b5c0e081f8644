"""The docs name the tests that prove each promise: every test file they name exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_PATH = re.compile(r"`((?:[a-z_]+/)*test_[a-z0-9_]+\.py)")


def test_every_test_file_named_in_the_docs_exists() -> None:
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    tests = ROOT / "tests"
    missing = []
    for document in documents:
        for name in TEST_PATH.findall(document.read_text(encoding="utf-8")):
            name = name.removeprefix("tests/")
            found = (tests / name).is_file() if "/" in name else any(tests.rglob(name))
            if not found:
                missing.append(f"{document.relative_to(ROOT)}: {name}")
    assert missing == []
