"""What to tell the person about a load: plain sentences for the TUI's chat and the terminal."""

from __future__ import annotations

from forge.config.errors import ConfigError
from forge.config.store import LoadResult

MOST_LISTED = 5
"""Problems or warnings listed one by one; the rest are counted."""


def load_report(result: LoadResult) -> list[str]:
    """One line per problem and warning of `result`, each saying what runs instead.

    Empty when the config loaded cleanly. Lines name file, line and key, or the environment
    variable; never a value.
    """
    lines: list[str] = []
    if result.save_blocked is not None and result.error is not None:
        lines.append(
            f"Config file not applied: {result.error}. Forge runs on the environment's values "
            "and the defaults; the file was left untouched. Fix it by hand: it reloads when saved."
        )
        problems = result.problems[1:]
    else:
        problems = result.problems
    for problem in problems[:MOST_LISTED]:
        if problem.source == "file":
            lines.append(
                f"Config value not applied: {problem}. Every other value of the file is in use; "
                "this one runs on its default. Fix it in the file or in /settings."
            )
        else:
            lines.append(
                f"Environment value not applied: {problem}. The value below it (file or "
                "default) runs instead."
            )
    for warning in result.warnings[:MOST_LISTED]:
        lines.append(f"Config warning: {warning}.")
    hidden = max(0, len(problems) - MOST_LISTED) + max(0, len(result.warnings) - MOST_LISTED)
    if hidden:
        lines.append(f"…and {hidden} more: run `forge config validate` to see them all.")
    return lines


def unreadable_file(result: LoadResult) -> ConfigError | None:
    """The problem that kept the whole config file out (it cannot be read or parsed), or None
    when the file was used (if only in part) or is missing. Saving over such a file is off."""
    if result.save_blocked is None or not result.problems:
        return None
    first = result.problems[0]
    return first if first.source == "file" else None
