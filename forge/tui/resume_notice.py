"""The chat's "Resumed session" notice, with what the resume found wrong in the file — torn or
garbled lines skipped, a rebuilt header, lone surrogates replaced (issue 34) — so a repair
reaches the user, not only the log."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forge.session.core import Session


def resumed_notice(session: Session) -> tuple[str, str]:
    """The notice's text and kind ("error" when the file needed repair, else "info")."""
    text = f"Resumed session `{session.session_id}`."
    problems = session.log.problems
    if not problems:
        return text, "info"
    lines = "\n".join(f"- {problem}" for problem in problems)
    return f"{text} Its file needed repair:\n\n{lines}", "error"
