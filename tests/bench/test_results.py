"""The tables, the machine facts and the RESULTS.md writer."""

from __future__ import annotations

from pathlib import Path

from bench.results import (
    VIOLATION_MARKER,
    Machine,
    SectionResult,
    Table,
    cpu_model,
    demote_headings,
    memory_gib,
    results_markdown,
    this_machine,
    write_results,
)

MACHINE = Machine(
    cpu="Test CPU @ 2.0GHz",
    cores=2,
    memory_gib=7.5,
    python="3.11.7",
    system="Linux 6.1",
    date="2026-01-01 10:00 UTC",
    commit="abc1234",
    load=(7.5, 6.0, 4.25),
)


def _table() -> Table:
    return Table(
        "Widgets",
        ("case", "seconds", "ratio"),
        [("plain", "1.0 s", "1.00x"), ("a|b", "2.0 s", "2.00x")],
    )


def test_text_table_aligns_the_label_left_and_figures_right() -> None:
    lines = _table().text().splitlines()
    assert lines[0] == "Widgets"
    assert lines[1].startswith("case ") and lines[1].endswith("ratio")
    assert lines[3] == "plain    1.0 s  1.00x"


def test_markdown_table_escapes_pipes_and_right_aligns_figures() -> None:
    markdown = _table().markdown()
    assert "**Widgets**" in markdown
    assert "| --- | ---: | ---: |" in markdown
    assert "| a\\|b | 2.0 s | 2.00x |" in markdown


def test_results_markdown_holds_machine_tables_commands_and_failures() -> None:
    passed = SectionResult("startup", "5. Start-up", "python -m bench startup", [_table()])
    passed.notes.append("Median of 7 runs.")
    passed.seconds = 12.0
    broken = SectionResult("parallel", "2. Parallel summarization", "python -m bench parallel")
    broken.violations.append("N=12, c=5: 25 in flight")
    crashed = SectionResult("replay", "1. Replay", "python -m bench.replay")
    crashed.error = "CorpusMissingError: no trajectories in /nowhere"
    text = results_markdown([crashed, broken, passed], MACHINE, 300.0)
    assert "- CPU: Test CPU @ 2.0GHz, 2 cores" in text
    assert "- Memory: 7.5 GiB" in text
    assert "- Date: 2026-01-01 10:00 UTC" in text
    assert "- Commit: abc1234" in text
    assert "7.50 / 6.00 / 4.25 on 2 cores" in text
    assert "- Outcome: FAILED (replay, parallel)" in text
    assert "## 5. Start-up" in text
    assert "Reproduce: `python -m bench startup` (12 s in this run)." in text
    assert "Median of 7 runs." in text
    assert "| plain | 1.0 s | 1.00x |" in text
    assert f"**{VIOLATION_MARKER}**: N=12, c=5: 25 in flight" in text
    assert "CorpusMissingError: no trajectories in /nowhere" in text
    assert broken.failed and crashed.failed and not passed.failed


def test_a_section_rendering_its_own_markdown_nests_under_its_title() -> None:
    section = SectionResult("replay", "1. Replay", "python -m bench.replay")
    section.markdown = "## Replay\n\n### Budget 8k\n\n```text\n# not a heading\n```\n"
    text = results_markdown([section], MACHINE, 1.0)
    assert "### Replay" in text and "#### Budget 8k" in text
    assert "\n# not a heading\n" in text
    assert "- Outcome: every section passed" in text


def test_demote_headings_leaves_code_alone() -> None:
    assert (
        demote_headings("# A\ntext\n```\n# code\n```\n## B")
        == "## A\ntext\n```\n# code\n```\n### B"
    )


def test_write_results_writes_the_file(tmp_path: Path) -> None:
    path = write_results(
        [SectionResult("tui", "4. The TUI", "python -m bench tui")], MACHINE, 5.0, tmp_path / "R.md"
    )
    assert path.read_text(encoding="utf-8").startswith("# Benchmark results")


def test_machine_facts_parse_proc_files() -> None:
    cpuinfo = "processor\t: 0\nmodel name\t: Some CPU 3000\nflags\t: x\n"
    assert cpu_model(cpuinfo) == "Some CPU 3000"
    assert cpu_model("processor: 0\n") == "unknown"
    assert memory_gib("MemTotal:       8388608 kB\nMemFree: 1 kB\n") == 8.0
    assert memory_gib("") == 0.0


def test_this_machine_names_a_commit_and_cores() -> None:
    machine = this_machine()
    assert machine.cores >= 1
    assert machine.commit and machine.commit != "unknown"
