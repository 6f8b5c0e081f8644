"""Referenced-output loss and user messages per request, on hand-made sessions whose right
answers are known."""

from __future__ import annotations

import json

from bench.fidelity import FidelityTracker
from bench.references import mentions, references
from bench.sessions import annotate
from forge.llm.messages import Message, ToolCall


def call(number: int, path: str) -> ToolCall:
    return ToolCall(id=f"c{number}", name="read_file", arguments=json.dumps({"path": path}))


def session():  # type: ignore[no-untyped-def]
    """0 system, 1 user, 2 call, 3 output (compute_total, 4593, src/app/main.py), 4 call,
    5 output (compute_total again, render_page), 6 assistant citing both outputs' tokens and
    one the user said (parse_config), 7 user, 8 assistant citing nothing new."""
    messages = [
        Message(role="system", content="You are a coding agent."),
        Message(role="user", content="Fix parse_config in the repository."),
        Message(role="assistant", content="Reading.", tool_calls=(call(1, "a.py"),)),
        Message(
            role="tool",
            content="def compute_total(x):\n    return 4593  # see src/app/main.py",
            tool_call_id="c1",
        ),
        Message(role="assistant", content="Reading more.", tool_calls=(call(2, "b.py"),)),
        Message(role="tool", content="compute_total() is called by render_page", tool_call_id="c2"),
        Message(
            role="assistant",
            content="compute_total returns 4593 in src/app/main.py; render_page calls it; "
            "parse_config is next.",
        ),
        Message(role="user", content="Thanks, now stop."),
        Message(role="assistant", content="Stopping."),
    ]
    kinds = [None, "instruction", None, None, None, None, None, "instruction", None]
    return annotate("hand-made", messages, kinds)


def test_mentions_finds_identifiers_numbers_and_paths() -> None:
    message = Message(role="assistant", content="see src/app/main.py line 42 in compute_total, x 7")
    assert mentions(message) == ["src/app/main.py", "42", "compute_total"]


def test_a_reference_is_a_token_only_earlier_outputs_hold_and_points_at_the_newest() -> None:
    found = references(session())
    assert list(found) == [6]
    reference = found[6]
    # compute_total is in both outputs: the newest (5) is its source; 4593 and the path come
    # from 3; render_page from 5; parse_config is the user's, not a reference.
    assert sorted(reference.tokens) == ["4593", "compute_total", "render_page", "src/app/main.py"]
    assert reference.outputs == [5, 3]


def test_the_tracker_counts_lost_outputs_missing_tokens_and_user_messages_per_request() -> None:
    data = session()
    tracker = FidelityTracker(data, set(), references(data))
    history = data.messages[:6]
    masked = Message(role="tool", content="[Old tool output omitted: 2 lines]", tool_call_id="c1")
    request = [*history[:3], masked, *history[4:]]
    lost = tracker.observe(6, request)
    assert lost == [3]
    result = tracker.result
    assert (result.referenced_lost, result.referenced_outputs) == (1, 2)
    # 4593 and the path were only in the masked output; compute_total is still in output 5.
    assert (result.referenced_tokens_missing, result.referenced_tokens) == (2, 4)
    assert (result.user_requests_verbatim, result.user_requests_total) == (1, 1)
    # The next request drops the first user message: 1 of the 2 user messages verbatim.
    assert tracker.observe(8, [data.messages[0], *data.messages[2:8]]) == []
    assert (result.user_requests_verbatim, result.user_requests_total) == (2, 3)


def test_an_observation_is_an_output_and_not_a_user_message() -> None:
    messages = [
        Message(role="user", content="Solve it."),
        Message(role="assistant", content="```\ncat settings.py\n```"),
        Message(role="user", content="TIMEOUT_SECONDS = 30"),
        Message(role="assistant", content="TIMEOUT_SECONDS is 30."),
    ]
    data = annotate("text-actions", messages)
    assert data.user_messages() == [0]
    assert references(data)[3].outputs == [2]
