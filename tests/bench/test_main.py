"""The orchestrator: sections by name, failures never skipped, the results file."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import bench.__main__ as orchestrator
import bench.corpus
from bench.corpus import CorpusMissingError, load_trajectory, require_trajectories


def test_a_missing_corpus_raises_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(CorpusMissingError, match=re.escape(str(tmp_path))):
        require_trajectories(tmp_path)
    with pytest.raises(CorpusMissingError, match=re.escape("nowhere.messages.json")):
        load_trajectory(tmp_path / "nowhere.messages.json")


def test_a_missing_corpus_fails_the_run_and_the_results_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench.corpus, "TRAJECTORIES", tmp_path / "trajectories")
    results = tmp_path / "RESULTS.md"
    status = orchestrator.main(["bookkeeping", "--results", str(results)])
    assert status == 1
    text = results.read_text(encoding="utf-8")
    assert "Outcome: FAILED (bookkeeping)" in text
    assert "CorpusMissingError" in text
    assert "skipped" not in capsys.readouterr().out.lower()


def test_an_unknown_section_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert orchestrator.main(["nonsense"]) == 2
    assert "unknown section" in capsys.readouterr().out


def test_a_subset_runs_only_the_named_sections_and_writes_nothing_by_default(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran: list[str] = []

    def fake(name: str) -> orchestrator.SectionResult:
        ran.append(name)
        return orchestrator.SectionResult(name, name, f"python -m bench {name}")

    for name in orchestrator.SECTIONS:
        monkeypatch.setitem(orchestrator.SECTIONS, name, lambda name=name: fake(name))
    written: list[object] = []
    monkeypatch.setattr(orchestrator, "write_results", lambda *a, **k: written.append(a))
    assert orchestrator.main(["startup", "parallel"]) == 0
    assert ran == ["parallel", "startup"]  # in the fixed section order
    assert written == []
    assert "2 section(s)" in capsys.readouterr().out


def test_a_violation_makes_the_run_fail(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def violating() -> orchestrator.SectionResult:
        result = orchestrator.SectionResult("parallel", "2.", "python -m bench parallel")
        result.violations.append("25 requests in flight, limit 5")
        return result

    monkeypatch.setitem(orchestrator.SECTIONS, "parallel", violating)
    results = tmp_path / "R.md"
    assert orchestrator.main(["parallel", "--results", str(results)]) == 1
    assert "VIOLATION" in results.read_text(encoding="utf-8")


def test_the_replay_section_fails_loudly_when_its_module_is_absent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "bench.replay", None)  # import raises ModuleNotFoundError
    result = orchestrator.run_section("replay")
    assert result.failed
    assert result.error is not None and "bench/replay.py is missing" in result.error
