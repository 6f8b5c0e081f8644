"""What the user typed, read the way the session reads it (docs/adr/0059 Part 5): a
`!command`, and a sent message taken back apart for showing a resumed chat — the files its
`@` mentions attached (docs/adr/0030) and the `@agent-` instruction added to it (0045).

The parsing stays in `forge.agent.input` and `forge.agent.subagents`, where the session
expands a message; the TUI names it through this module.
"""

from __future__ import annotations

from forge.agent.input.mentions import split_attachments
from forge.agent.input.shell_escape import shell_escape_command
from forge.agent.subagents.mentions import without_agent_request

__all__ = ["shell_escape_command", "split_attachments", "without_agent_request"]
