"""The tool definitions sent to the model stay byte-identical (ADR 0040).

The snapshot was written from the hand-written JSON schemas before the tools' arguments became
pydantic models; the generated schemas must serialize to the same bytes (the replay bench
counts tool-definition tokens, and a provider's prompt cache keys on them).
Regenerate only on purpose: `UPDATE_TOOL_SNAPSHOT=1 pytest <this file>`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from forge.agent.history.recall_archive import SessionArchive
from forge.agent.skills.catalog import SkillCatalog
from forge.agent.tools.recall import RecallTool
from forge.agent.tools.registry import default_registry
from forge.agent.tools.skill import SkillTool

SNAPSHOT = Path(__file__).parent / "snapshots" / "tool_specs.json"


def _wire_text(tmp_path: Path) -> str:
    specs = [
        *default_registry().specs(),
        RecallTool(SessionArchive(tmp_path / "s.jsonl")).spec,
        SkillTool(SkillCatalog(tmp_path, roots=[])).spec,
    ]
    return json.dumps([spec.to_api() for spec in specs], indent=2, ensure_ascii=False) + "\n"


def test_tool_definitions_are_byte_identical_to_the_snapshot(tmp_path: Path) -> None:
    text = _wire_text(tmp_path)
    if os.environ.get("UPDATE_TOOL_SNAPSHOT"):
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert text == SNAPSHOT.read_text(encoding="utf-8")
