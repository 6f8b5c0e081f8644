"""The readable line of each notice event, written once for every front end (docs/adr/0059).

`forge run`'s text mode prints these lines on stderr, `forge acp` sends them as agent thoughts,
and the TUI says a retry with `describe_retry`. Plain text: a front end makes it safe for its
own output (terminal-safe, markup-escaped, masked).
"""

from __future__ import annotations

from typing import assert_never

from forge.agent.events import (
    AgentEvent,
    ContextWarning,
    HookBlocked,
    HookOutput,
    HookWarning,
    RetryScheduled,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationProgress,
    SummarizationStarted,
    SummarizerDisabled,
    UserMessageShortened,
)

ContextNotice = (
    ContextWarning
    | SummarizationStarted
    | SummarizationProgress
    | SummarizationCompleted
    | SummarizationFailed
    | SummarizerDisabled
    | UserMessageShortened
)
"""The events text mode prints as a `[context]` line."""


def context_line(event: ContextNotice) -> str:
    """One readable line for a context warning, summarization or shortened-message event."""
    match event:
        case ContextWarning():
            share = event.current_tokens / event.max_tokens if event.max_tokens else 0.0
            return (
                f"[context] {share:.0%} of the {event.max_tokens:,}-token budget used "
                f"({event.current_tokens:,} tokens; warning at {event.threshold:.0%})"
            )
        case SummarizationStarted():
            return (
                f"[context] summarizing {event.items} item(s) with {event.model} "
                f"({event.strategy}, {event.trigger.value}) at "
                f"{event.current_tokens:,}/{event.max_tokens:,} tokens"
            )
        case SummarizationProgress():
            failed = f", {event.failed} failed" if event.failed else ""
            return f"[context] {event.strategy}: {event.done}/{event.total} done{failed}"
        case SummarizationCompleted():
            return (
                f"[context] {event.strategy} summarized {event.items} item(s) with "
                f"{event.model}: {event.tokens_before:,} → {event.tokens_after:,} tokens in "
                f"{event.duration_s:.1f}s ({event.llm_calls} LLM call(s))"
            )
        case SummarizationFailed():
            fallback = f"; fallback: {event.fallback}" if event.fallback else ""
            return f"[context] {event.strategy} failed with {event.model}: {event.error}{fallback}"
        case SummarizerDisabled() | UserMessageShortened():
            return f"[context] {event.text}"
        case _:
            assert_never(event)


def hook_line(event: AgentEvent) -> str:
    """One readable line for a hook's notice ("" for other events; docs/adr/0043)."""
    match event:
        case HookBlocked():
            return f"[hook] {event.event} blocked by {event.hook}: {event.reason}"
        case HookOutput():
            return f"[hook] {event.event} {event.hook}: {event.text}"
        case HookWarning():
            return f"[hook] warning: {event.text}"
        case _:
            return ""


_READABLE_KINDS = {
    "transport": "the server could not be reached",
    "rate_limited": "rate-limited",
    "server_error": "server error",
    "stream_error": "the stream broke off",
    "malformed_stream": "the stream was garbled",
}


def retry_reason(retry: RetryScheduled) -> str:
    """Why, in a few words: "HTTP 500", "the server could not be reached"."""
    if retry.status_code is not None and 400 <= retry.status_code < 600:
        return f"HTTP {retry.status_code}"
    return _READABLE_KINDS.get(retry.error_kind, retry.error_kind)


def describe_retry(retry: RetryScheduled) -> str:
    """ "retrying in 4 s (HTTP 500, retry 1 of 4)"."""
    seconds = f"{retry.delay:.0f}" if retry.delay >= 1 else f"{retry.delay:.1f}"
    return (
        f"retrying in {seconds} s ({retry_reason(retry)}, "
        f"retry {retry.attempt} of {retry.max_attempts})"
    )
