"""What a policy kept: the fidelity checks of the replay (definitions in bench/sessions.py).

Verbatim means exact content equality: a message of the session is kept if the request holds a
message with the same role and content (a tool result also with the same call id; an assistant
message also with each of its calls, same id, name and arguments).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench.recall_keys import unrecoverable
from bench.references import Reference
from bench.sessions import Session, touched_paths
from bench.trail import TrailBuilder, aggregate_lines, probes
from forge.llm.messages import Message

NEWEST_TOOL_OUTPUTS = 3
"""Tool outputs that must be verbatim in every request."""

Key = tuple[str, str, str]


def message_keys(request: Sequence[Message]) -> set[Key]:
    """Everything in a request a verbatim check looks for."""
    keys: set[Key] = set()
    for message in request:
        call_id = message.tool_call_id or "" if message.role == "tool" else ""
        keys.add((message.role, call_id, message.content))
        for call in message.tool_calls:
            keys.add(("call", call.id, f"{call.name}\n{call.arguments}"))
    return keys


def is_verbatim(message: Message, keys: set[Key]) -> bool:
    """Whether the request these keys came from holds `message` unchanged."""
    call_id = message.tool_call_id or "" if message.role == "tool" else ""
    if (message.role, call_id, message.content) not in keys:
        return False
    return all(
        ("call", call.id, f"{call.name}\n{call.arguments}") in keys for call in message.tool_calls
    )


def request_text(request: Sequence[Message]) -> str:
    """All the text of a request: contents and tool-call arguments."""
    parts = []
    for message in request:
        parts.append(message.content)
        parts.extend(f"{call.name} {call.arguments}" for call in message.tool_calls)
    return "\n".join(parts)


def excluded_messages(messages: Sequence[Message], excluded_tools: set[str]) -> list[Message]:
    """Assistant messages calling an excluded tool, and those calls' results."""
    calls = {
        call.id
        for message in messages
        for call in message.tool_calls
        if call.name in excluded_tools
    }
    return [
        message
        for message in messages
        if any(call.id in calls for call in message.tool_calls)
        or (message.role == "tool" and message.tool_call_id in calls)
    ]


@dataclass
class Fidelity:
    """The fidelity figures of one replay."""

    user_verbatim: int = 0
    user_total: int = 0
    excluded_verbatim: int = 0
    excluded_total: int = 0
    newest_tools_verbatim: int = 0
    """Requests in which the newest 3 tool outputs were all verbatim."""
    latest_user_kept: int = 0
    """Requests in which the latest user message (observations aside) was verbatim."""
    requests: int = 0
    paths_recalled: int = 0
    paths_total: int = 0
    user_requests_verbatim: int = 0
    """(user message, request) pairs in which the user message was verbatim."""
    user_requests_total: int = 0
    """User messages before each request, summed over the requests."""
    referenced_outputs: int = 0
    """(assistant message, referenced output) pairs (bench/references.py)."""
    referenced_lost: int = 0
    """Of those, the output was not verbatim in the request that produced the message."""
    referenced_tokens: int = 0
    """(assistant message, referenced token) pairs."""
    referenced_tokens_missing: int = 0
    """Of those, the token was nowhere in that request."""
    unrecoverable_lost: int = 0
    """Lost referenced outputs no recall key in the request reaches (bench/recall_keys.py)."""
    trail_probes_hit: int = 0
    """Work-trail probes answered, over the requests after the first compaction
    (bench/trail.py)."""
    trail_probes_total: int = 0

    @property
    def latest_user_intact(self) -> bool:
        """The latest user message was verbatim in every request."""
        return self.latest_user_kept == self.requests


class FidelityTracker:
    """Checks each request as it is made, and the final one at the end."""

    def __init__(
        self,
        session: Session,
        excluded_tools: set[str],
        references: dict[int, Reference] | None = None,
        *,
        has_recall: bool = False,
    ) -> None:
        self.session = session
        self.excluded_tools = excluded_tools
        self.references = references or {}
        self.has_recall = has_recall
        """Whether the policy has Forge's `recall` tool (recall keys count)."""
        self.user_messages = session.user_messages()
        self.result = Fidelity()
        self.reachable: set[int] = set()
        """Of the last request's lost outputs, those a recall key in it reaches."""
        self.compacted = False
        """Whether some earlier request lacked an earlier message of the session verbatim."""
        self._trail = TrailBuilder(session)
        self._outputs: list[int] = []
        self._latest_user: int | None = None
        self._seen = 0

    def _advance(self, end: int) -> None:
        for index in range(self._seen, end):
            if self.session.is_tool_output(index):
                self._outputs.append(index)
            if self.session.messages[index].role == "user" and not self.session.is_tool_output(
                index
            ):
                self._latest_user = index
        self._seen = max(self._seen, end)

    def observe(self, end: int, request: Sequence[Message]) -> list[int]:
        """The request made after the session's first `end` messages (it produced the message
        at `end`); returns the indices of the referenced outputs it lost."""
        self._advance(end)
        keys = message_keys(request)
        messages = self.session.messages
        result = self.result
        result.requests += 1
        text = request_text(request)
        self._probe_trail(end, keys, text)
        self.reachable = set()
        newest = self._outputs[-NEWEST_TOOL_OUTPUTS:]
        if all(is_verbatim(messages[index], keys) for index in newest):
            result.newest_tools_verbatim += 1
        if self._latest_user is None or is_verbatim(messages[self._latest_user], keys):
            result.latest_user_kept += 1
        users = [index for index in self.user_messages if index < end]
        result.user_requests_total += len(users)
        result.user_requests_verbatim += sum(is_verbatim(messages[i], keys) for i in users)
        reference = self.references.get(end)
        if reference is None:
            return []
        lost = [index for index in reference.outputs if not is_verbatim(messages[index], keys)]
        result.referenced_outputs += len(reference.outputs)
        result.referenced_lost += len(lost)
        result.referenced_tokens += len(reference.tokens)
        result.referenced_tokens_missing += sum(token not in text for token in reference.tokens)
        ids = {messages[index].id: index for index in lost}
        gone = set(unrecoverable(ids, text, self.has_recall))
        result.unrecoverable_lost += len(gone)
        self.reachable = {index for message_id, index in ids.items() if message_id not in gone}
        return lost

    def _probe_trail(self, end: int, keys: set[Key], text: str) -> None:
        """The work-trail probes of one request, once a compaction has happened."""
        messages = self.session.messages
        if not self.compacted:
            self.compacted = not all(is_verbatim(messages[i], keys) for i in range(end))
            if not self.compacted:
                return
        state = self._trail.advance(end)
        aggregates: list[str] | None = None
        for probe in probes(state):
            self.result.trail_probes_total += 1
            if all(is_verbatim(messages[i], keys) for i in probe.sources):
                self.result.trail_probes_hit += 1
                continue
            if aggregates is None:
                aggregates = aggregate_lines(text)
            self.result.trail_probes_hit += probe.check(text, aggregates)

    def finish(self, end: int, request: Sequence[Message]) -> Fidelity:
        """The final-request checks, for the final request made after `end` messages."""
        history = self.session.messages[:end]
        keys = message_keys(request)
        result = self.result
        instructions = [history[i] for i in sorted(self.session.instructions) if i < end]
        result.user_total = len(instructions)
        result.user_verbatim = sum(is_verbatim(message, keys) for message in instructions)
        excluded = excluded_messages(history, self.excluded_tools)
        result.excluded_total = len(excluded)
        result.excluded_verbatim = sum(is_verbatim(message, keys) for message in excluded)
        paths = touched_paths(history)
        text = request_text(request)
        result.paths_total = len(paths)
        result.paths_recalled = sum(path in text for path in paths)
        return result
