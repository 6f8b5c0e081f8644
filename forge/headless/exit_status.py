"""`forge run`'s binding exit-code table and the `result` record's `subtype` for each ending
(docs/adr/0015-headless-output.md).

| code | ending | subtype |
|---|---|---|
| 0 | the task was completed (`task_completion`) or answered | success |
| 1 | the run failed: server, tool or internal error, the circuit breaker | error_during_execution |
| 2 | usage error, before any request (bad flag, config, task file, budget, output | (none) |
|   | file; a budget with an unpriced model)                                       |        |
| 3 | `--max-turns` reached | error_max_turns |
| 4 | `--max-budget-usd` reached | error_max_budget |
| 5 | `--timeout` reached | error_timeout |
| 128+N | signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP) | error_signal |
"""

from __future__ import annotations

from dataclasses import dataclass

from forge.agent.exit_signals import exit_code_for

EXIT_COMPLETED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_MAX_TURNS = 3
EXIT_MAX_BUDGET = 4
EXIT_TIMEOUT = 5

MAX_BUDGET_REASON = "max_budget"
"""The `turn_finished` reason when `--max-budget-usd` stopped the run."""
SIGNAL_REASON = "signal"
"""The `turn_finished` reason when a signal stopped the run."""

SUCCESSFUL_ENDINGS = frozenset({"completed", "answered"})

_BY_REASON: dict[str, tuple[int, str]] = {
    "completed": (EXIT_COMPLETED, "success"),
    "answered": (EXIT_COMPLETED, "success"),
    "max_turns": (EXIT_MAX_TURNS, "error_max_turns"),
    MAX_BUDGET_REASON: (EXIT_MAX_BUDGET, "error_max_budget"),
    "timeout": (EXIT_TIMEOUT, "error_timeout"),
}


@dataclass(frozen=True)
class Ending:
    """How a run ended: the turn's reason, the exit code and the result's subtype."""

    reason: str
    exit_code: int
    subtype: str

    @property
    def is_error(self) -> bool:
        """Whether the run did not succeed."""
        return self.exit_code != EXIT_COMPLETED


def ending_for(reason: str) -> Ending:
    """The ending of a turn that finished with `reason` (any other reason — error, circuit
    breaker — is a failed run: exit 1)."""
    code, subtype = _BY_REASON.get(reason, (EXIT_FAILED, "error_during_execution"))
    return Ending(reason, code, subtype)


def signal_ending(signal_number: int) -> Ending:
    """The ending of a run stopped by signal `signal_number`: exit 128 + N."""
    return Ending(SIGNAL_REASON, exit_code_for(signal_number), "error_signal")
