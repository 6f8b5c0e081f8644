"""What a recorded message keeps for the chat beside what the model reads (docs/adr/0048).

The model reads a message's `content`; the user saw something else live: the command they
typed (`/greet Alice`, not the skill's text), hook notices beside a tool row, a Stop hook's
reason as a hook card (not as their own words). These keys in `Message.meta` carry that, so a
resumed chat, `/rewind`'s list and a session's title show what the live chat showed. Old
session files lack them and read as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from forge.agent.events import AgentEvent, HookBlocked, HookOutput, HookWarning
from forge.context.conversation import Conversation
from forge.llm.messages import Message, MessageKind, ToolCall

TYPED_KEY = "typed"
"""On a user message: what the user typed, when the content sent differs (a skill's or custom
command's expansion, hook context, an `@agent-` request)."""
EXPANSION_KEY = "expansion"
"""On a user message: the text a `/command` or skill expanded to (shown folded)."""
HOOK_NOTICES_KEY = "hook_notices"
"""On a tool result, a user message or a Stop hook's feedback: the hook notices shown live."""
STOP_HOOK_NOTE = "stop_hook"
"""`meta["note"]` of the user-side message carrying a blocking Stop hook's reason."""
HOOK_CONTEXT_MARK = '\n\n<hook-context source="'
"""Where hook context added to a user message begins (`forge.agent.hooks.session_hooks`)."""
STOP_FEEDBACK_PREFIX = "A Stop hook did not let the turn end yet:\n"
"""How the message carrying a blocking Stop hook's reason begins (`forge.agent.hooks.turn_hooks`):
files written before it was marked `STOP_HOOK_NOTE` are known by it."""
CHILD_REASON_KEY = "subagent_reason"
"""On a `task` result: how the child ended ("completed", "interrupted", "max_turns"…)."""
CHILD_CALLS_KEY = "subagent_calls"
"""On a `task` result: the child's tool calls, `{id, name, arguments, status}` each."""
FIGURES_PREFIX = "\n\n[subagent] "
"""Where a `task` result's line of figures for the model begins (forge.agent.subagents.run)."""

HookNotice = HookBlocked | HookOutput | HookWarning


def typed_text(message: Message) -> str:
    """What the user typed for the user message `message`: as recorded, or (files written
    before it was) its content without the hook context added to it."""
    typed = message.meta.get(TYPED_KEY)
    return typed if isinstance(typed, str) else message.content.split(HOOK_CONTEXT_MARK, 1)[0]


def notice_records(events: Iterable[AgentEvent]) -> list[dict[str, str]]:
    """The hook notices among `events`, as JSON records for a message's meta."""
    records: list[dict[str, str]] = []
    for event in events:
        if isinstance(event, HookBlocked):
            record = {"kind": "blocked", "event": event.event, "hook": event.hook}
            records.append({**record, "text": event.reason})
        elif isinstance(event, HookOutput):
            record = {"kind": "output", "event": event.event, "hook": event.hook}
            records.append({**record, "text": event.text})
        elif isinstance(event, HookWarning):
            records.append({"kind": "warning", "event": event.event, "text": event.text})
    return records


def with_notices(meta: Mapping[str, Any], events: Iterable[AgentEvent]) -> dict[str, Any]:
    """`meta` with the hook notices among `events` added (unchanged when there are none)."""
    records = notice_records(events)
    return {**meta, HOOK_NOTICES_KEY: records} if records else dict(meta)


def add_notices(conversation: Conversation, events: Iterable[AgentEvent]) -> None:
    """Record the hook notices among `events` on the conversation's last message (after the
    ones it has): a turn's end — Stop hooks that let it end, the Notification hook — shows
    them after the answer, live and resumed. Nothing changes when there are none."""
    records = notice_records(events)
    if not records or not len(conversation):
        return
    index = len(conversation) - 1
    last = conversation[index]
    found = last.meta.get(HOOK_NOTICES_KEY)
    kept = found if isinstance(found, list) else []
    meta = {**last.meta, HOOK_NOTICES_KEY: [*kept, *records]}
    conversation.replace_message(index, last.evolve(meta=meta))  # a `replace` record on disk


def recorded_notices(meta: Mapping[str, Any]) -> list[HookNotice]:
    """The hook notices a message's `meta` recorded, in order (bad records are skipped)."""
    found = meta.get(HOOK_NOTICES_KEY)
    notices: list[HookNotice] = []
    for record in found if isinstance(found, list) else ():
        if not isinstance(record, dict):
            continue
        kind, event = record.get("kind"), str(record.get("event") or "")
        text, hook = str(record.get("text") or ""), str(record.get("hook") or "")
        if kind == "blocked":
            notices.append(HookBlocked(event, hook, text))
        elif kind == "output":
            notices.append(HookOutput(event, hook, text))
        elif kind == "warning":
            notices.append(HookWarning(event, text))
    return notices


def without_figures(content: str) -> str:
    """A `task` result as the user reads it: without the `[subagent] {…}` line of figures the
    model reads (the row's status and the status pane say those)."""
    head, found, tail = content.rpartition(FIGURES_PREFIX)
    return head if found and tail.startswith("{") and "\n" not in tail.strip() else content


def child_reason(result: Message) -> str:
    """How the child of the `task` result `result` ended ("" when it is no child's result):
    recorded in its meta, or (files written before that) in its line of figures."""
    if not result.meta.get("subagent"):
        return ""
    reason = result.meta.get(CHILD_REASON_KEY)
    if isinstance(reason, str):
        return reason
    _, found, figures = result.content.rpartition(FIGURES_PREFIX)
    try:
        parsed = json.loads(figures) if found else {}
    except json.JSONDecodeError:
        return ""
    reason = parsed.get("reason") if isinstance(parsed, dict) else None
    return reason if isinstance(reason, str) else ""


def child_calls(meta: Mapping[str, Any]) -> list[tuple[ToolCall, str]]:
    """The child's tool calls a `task` result's `meta` recorded, with their status."""
    found = meta.get(CHILD_CALLS_KEY)
    calls: list[tuple[ToolCall, str]] = []
    for record in found if isinstance(found, list) else ():
        if isinstance(record, dict) and isinstance(record.get("name"), str):
            arguments = str(record.get("arguments") or "{}")
            call = ToolCall(str(record.get("id") or ""), record["name"], arguments)
            calls.append((call, str(record.get("status") or "ok")))
    return calls


def is_stop_feedback(message: Message) -> bool:
    """Whether the user-side `message` carries a blocking Stop hook's reason to the model
    (Forge's words, not the user's: no user row, no `/rewind` turn)."""
    if message.meta.get("note") == STOP_HOOK_NOTE:
        return True
    return (
        message.role == "user"
        and message.kind is MessageKind.NORMAL
        and "note" not in message.meta
        and TYPED_KEY not in message.meta
        and message.content.startswith(STOP_FEEDBACK_PREFIX)
    )
