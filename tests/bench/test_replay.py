"""`python -m bench.replay` end to end on small synthetic sessions, with the summarizer in its
own process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.replay import main, run
from tests.bench.sessions_support import tool_session, write_trajectory

ROOT = Path(__file__).resolve().parents[2]
REQUIRED_FIELDS = {
    "session",
    "budget",
    "policy",
    "prompt_tokens",
    "uncached_prompt_tokens",
    "cost_usd",
    "summary_calls",
    "peak_prompt_tokens",
    "over_budget",
    "user_verbatim",
    "user_total",
    "excluded_verbatim",
    "excluded_total",
    "paths_recalled",
    "paths_total",
    "summary_input_tokens",
    "summary_output_tokens",
    "latest_user_intact",
    "cost_usd_openai",
    "cost_usd_anthropic",
    "recall_cost_usd_openai",
    "recall_cost_usd_anthropic",
    "referenced_outputs",
    "referenced_lost",
    "user_requests_verbatim",
    "user_requests_total",
    "unrecoverable_lost",
    "trail_probes_hit",
    "trail_probes_total",
}


def test_replay_writes_tables_and_every_row_as_json(tmp_path: Path) -> None:
    first = write_trajectory(tmp_path / "a.messages.json", tool_session(24, output_words=120))
    second = write_trajectory(
        tmp_path / "b.messages.json", tool_session(6, instruction="Now add tests.")
    )
    out = tmp_path / "rows.json"
    policies = [
        "none",
        "masking",
        "summarize-at-90",
        "eager",
        "forge",
        "forge:messages_old_threshold=10",
    ]
    argv = [str(first), str(second), "--budget", "4k", "--budget", "default", "--json", str(out)]
    for policy in policies:
        argv += ["--policy", policy]
    markdown = run(argv)
    rows = json.loads(out.read_text("utf-8"))
    assert len(rows) == 3 * 2 * len(policies)  # (a, b, combined) x budgets x policies
    assert all(set(row) >= REQUIRED_FIELDS for row in rows)
    assert "### Budget 4k" in markdown and "### Budget default (" in markdown
    assert "| all trajectories | forge |" in markdown and "| combined | masking |" in markdown
    assert "### Context engine v2 targets for `forge`" in markdown
    assert "### Context engine v2 targets for `forge:messages_old_threshold=10`" in markdown
    small = {r["policy"]: r for r in rows if r["session"] == "a" and r["budget"] == 4000}
    none, masking, forge = small["none"], small["masking"], small["forge"]
    assert none["over_budget"] > 0 and none["summary_calls"] == 0
    assert masking["prompt_tokens"] < none["prompt_tokens"]
    assert masking["uncached_prompt_tokens"] > none["uncached_prompt_tokens"]  # the cache breaks
    assert forge["over_budget"] == 0 and forge["summary_calls"] > 0
    assert forge["summary_input_tokens"] > forge["summary_output_tokens"] > 0
    combined = [r for r in rows if r["session"] == "combined" and r["policy"] == "none"]
    assert all(r["user_total"] == 2 and r["user_verbatim"] == 2 for r in combined)


def test_a_missing_corpus_is_a_failure_not_a_skip(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run([str(tmp_path / "missing.messages.json")])
    assert main([str(tmp_path / "missing.messages.json")]) == 1


def test_an_unknown_policy_key_is_an_error(tmp_path: Path) -> None:
    path = write_trajectory(tmp_path / "a.messages.json", tool_session(2))
    with pytest.raises(ValueError, match="unknown setting"):
        run([str(path), "--policy", "forge:colour=blue"])


def test_the_module_runs_from_the_command_line(tmp_path: Path) -> None:
    path = write_trajectory(tmp_path / "a.messages.json", tool_session(3))
    done = subprocess.run(
        [sys.executable, "-m", "bench.replay", str(path), "--budget", "8k", "--policy", "none"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "| a | none |" in done.stdout
    failed = subprocess.run(
        [sys.executable, "-m", "bench.replay", str(tmp_path / "nope.messages.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert failed.returncode == 1
    assert "not found" in failed.stderr


def test_replay_runs_on_a_folder_and_reports_recall_and_both_price_models(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    write_trajectory(folder / "a.messages.json", tool_session(16, output_words=150))
    write_trajectory(folder / "b.messages.json", tool_session(5, instruction="Add tests."))
    out = tmp_path / "rows.json"
    argv = [str(folder), "--budget", "3k", "--json", str(out)]
    for policy in (
        "none",
        "masking",
        "masking-3",
        "codex",
        "claude-code",
        "openhands",
        "gemini-cli",
    ):
        argv += ["--policy", policy]
    markdown = run(argv)
    rows = {(r["session"], r["policy"]): r for r in json.loads(out.read_text("utf-8"))}
    assert {session for session, _ in rows} == {"a", "b", "combined"}
    for row in rows.values():
        assert row["cost_usd"] == row["cost_usd_openai"]
        assert row["recall_cost_usd_openai"] >= row["cost_usd_openai"]
        assert row["recall_cost_usd_anthropic"] >= row["cost_usd_anthropic"] > 0
        assert row["referenced_lost"] <= row["referenced_outputs"]
        assert row["recall_requests"] == row["referenced_lost"]
        assert row["unrecoverable_lost"] == row["referenced_lost"]  # no recall without forge
        assert row["trail_probes_hit"] <= row["trail_probes_total"]
        if row["session"] != "combined":  # one instruction before every request
            assert row["user_requests_total"] == row["requests"]
    none = rows[("a", "none")]
    assert none["referenced_lost"] == 0
    assert none["recall_cost_usd_openai"] == none["cost_usd_openai"]
    assert none["user_requests_verbatim"] == none["user_requests_total"] == none["requests"]
    assert "Recall-adjusted cost, two cache price models" in markdown
    assert "| all sessions (2) | codex |" in markdown
    # A single-request session gives Gemini CLI no point to compress at: over budget, reported.
    assert rows[("a", "gemini-cli")]["over_budget"] > 0
    assert "| all sessions (2) | gemini-cli |" in markdown


def test_quick_runs_a_tight_a_middle_and_the_default_budget(tmp_path: Path) -> None:
    path = write_trajectory(tmp_path / "a.messages.json", tool_session(3))
    out = tmp_path / "rows.json"
    run([str(path), "--quick", "--policy", "none", "--no-combined", "--json", str(out)])
    budgets = [row["budget_label"] for row in json.loads(out.read_text("utf-8"))]
    assert budgets[:2] == ["8k", "32k"] and budgets[2].startswith("default (")
    assert len(budgets) == 3
