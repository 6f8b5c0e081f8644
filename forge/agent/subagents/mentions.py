"""`@agent-<name> message`: the user asks for a subagent by name (docs/adr/0045).

The mention stays in the message, and a line after it tells the model to hand the message to
that agent with `task` (as Claude Code's `@agent-` mention does). A plain `@path` mention is
untouched: only `@agent-` followed by a known agent's name counts.
"""

from __future__ import annotations

import re
from collections.abc import Collection

_AGENT_MENTION = re.compile(r"(?:(?<=[\s(\[{])|^)@agent-(?P<name>[a-z0-9][a-z0-9_-]*)(?![\w./-])")
_REQUEST = (
    '\n\n(The user asks for the `{name}` agent: call `task` with agent "{name}" '
    "and a prompt holding everything this message asks, then report what it found.)"
)
"""The instruction added after the message (`{name}`: the agent's)."""
_REQUEST_NOTE = re.compile(re.escape(_REQUEST).replace(re.escape("{name}"), "[a-z0-9][a-z0-9_-]*"))


def requested_agent(text: str, names: Collection[str]) -> str | None:
    """The first known agent `text` mentions as `@agent-<name>`, if any."""
    for match in _AGENT_MENTION.finditer(text):
        if match.group("name") in names:
            return match.group("name")
    return None


def with_agent_request(text: str, name: str) -> str:
    """`text` with the instruction to hand it to agent `name`."""
    return text + _REQUEST.format(name=name)


def without_agent_request(text: str) -> str:
    """`text` without the instruction `with_agent_request` added: the message as the user
    typed it (a resumed chat shows that, as the live chat did)."""
    return _REQUEST_NOTE.sub("", text, count=1)
