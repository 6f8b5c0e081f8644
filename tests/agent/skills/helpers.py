"""Writing real skill folders in temp dirs for the skills tests."""

from __future__ import annotations

from pathlib import Path


def write_skill(
    root: Path,
    name: str,
    description: str = "Does a thing.",
    body: str = "Follow these steps.\n",
    *,
    folder: str | None = None,
    extra: str = "",
) -> Path:
    """`root/<folder or name>/SKILL.md` with front matter; its path."""
    path = root / (folder or name) / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}", encoding="utf-8"
    )
    return path


def write_raw(root: Path, folder: str, text: str | bytes) -> Path:
    """`root/folder/SKILL.md` holding exactly `text`."""
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path
