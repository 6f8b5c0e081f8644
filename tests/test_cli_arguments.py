"""The CLI accepts session flags before or after `run`, and `run` never resets them."""

from __future__ import annotations

from forge.cli import _build_parser


def test_session_flags_work_before_and_after_run() -> None:
    parser = _build_parser()
    before = parser.parse_args(["--continue", "run", "task"])
    after = parser.parse_args(["run", "--continue", "task"])
    resumed = parser.parse_args(["run", "--resume", "abc", "-C", "/tmp/x", "task"])
    assert before.continue_session and after.continue_session
    assert resumed.resume == "abc" and resumed.workspace == "/tmp/x"


def test_run_without_flags_keeps_the_top_level_defaults() -> None:
    args = _build_parser().parse_args(["--resume", "xyz", "run", "task"])
    assert args.resume == "xyz" and args.continue_session is False and args.workspace == "."
