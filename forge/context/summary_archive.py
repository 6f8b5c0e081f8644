"""Summaries on disk: one markdown file per summary, with YAML front matter, beside the session,
so a user can read what was compacted and why. Every file goes through the same redaction as
the session file: no secret Forge knows of is written (`forge.config.secrets`)."""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from forge.config.secrets import REDACTED, redact


@dataclass(frozen=True, slots=True)
class SummaryRecord:
    """What one summary replaced and what it cost."""

    message_id: str
    strategy: str
    model: str
    trigger: str
    tokens_in: int
    tokens_out: int
    replaced_ids: Sequence[str]
    text: str
    llm_calls: int = 0
    collapse_depth: int = 0
    created: float = 0.0

    @property
    def compression_ratio(self) -> float:
        """tokens_in / tokens_out (1.0 when nothing shrank)."""
        return round(self.tokens_in / self.tokens_out, 3) if self.tokens_out else 1.0

    def front_matter(self) -> dict[str, Any]:
        """The YAML header fields."""
        created = dt.datetime.fromtimestamp(self.created or 0, tz=dt.UTC)
        return {
            "message_id": self.message_id,
            "strategy": self.strategy,
            "trigger": self.trigger,
            "model": self.model,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "compression_ratio": self.compression_ratio,
            "llm_calls": self.llm_calls,
            "collapse_depth": self.collapse_depth,
            "replaced_ids": list(self.replaced_ids),
            "created": created.isoformat(timespec="seconds"),
        }

    def to_markdown(self) -> str:
        """Front matter between `---` lines, then the summary text."""
        header = yaml.safe_dump(self.front_matter(), sort_keys=False, allow_unicode=True)
        return f"---\n{header}---\n\n{self.text.rstrip()}\n"


class SummaryArchive:
    """Writes summary files into `directory` (created 0700 on first write)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def write(self, record: SummaryRecord) -> Path:
        """Write one summary atomically, secrets redacted; returns its path."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        stamp = dt.datetime.fromtimestamp(record.created or 0, tz=dt.UTC).strftime("%Y%m%dT%H%M%S")
        path = self.directory / f"{stamp}-{record.strategy}-{record.message_id}.md"
        descriptor, temporary = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(redact(record.to_markdown(), REDACTED))
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return path


def read_summary_file(path: Path) -> tuple[dict[str, Any], str]:
    """The front matter and body of a file `SummaryArchive.write` produced."""
    text = path.read_text(encoding="utf-8")
    _, header, body = text.split("---\n", 2)
    return yaml.safe_load(header), body.strip()
