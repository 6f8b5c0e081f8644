"""The budget: exact threshold comparisons, usage from server reports, warning latch, governor."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from forge.config.settings import ContextSettings
from forge.context.budget import (
    CompactionGovernor,
    UsageTracker,
    WarningLatch,
    prompt_budget,
    reached,
)
from forge.llm.messages import assistant, user
from forge.llm.model_info import default_reply_headroom
from tests.context.builders import conversation, counter


def test_budget_is_max_tokens_when_set_else_window_minus_reply_headroom() -> None:
    assert prompt_budget(ContextSettings(max_tokens=5000), 128_000) == 5000
    window = 128_000
    assert prompt_budget(ContextSettings(), window) == window - default_reply_headroom(window)


@pytest.mark.parametrize(
    ("current", "maximum", "fraction", "expected"),
    [
        (799, 1000, 0.80, False),
        (800, 1000, 0.80, True),
        (7999, 10_000, 0.80, False),
        (899, 1000, 0.90, False),
        (900, 1000, 0.90, True),
        (849, 1000, 0.85, False),
        (850, 1000, 0.85, True),
        (1, 0, 0.5, True),
    ],
)
def test_reached_compares_exactly_at_the_boundary(
    current: int, maximum: int, fraction: float, expected: bool
) -> None:
    assert reached(current, maximum, fraction) is expected


def test_auto_summary_below_warning_is_refused_by_validation() -> None:
    with pytest.raises(ValidationError):
        ContextSettings(warning_threshold=0.85, auto_summary_threshold=0.80)


def test_usage_is_local_count_without_a_report() -> None:
    tracker = UsageTracker(counter())
    chat = conversation(user("hello there"), assistant("hi"))
    assert tracker.current(chat) == counter().count_messages(chat.messages)


def test_usage_is_reported_tokens_plus_messages_appended_since() -> None:
    exact = counter()
    tracker = UsageTracker(exact)
    chat = conversation(user("a question"))
    tracker.mark_sent(chat)
    reply = assistant("an answer of some length")
    chat.append(reply)  # appended before the agent records usage
    tracker.record(5000, chat)
    assert tracker.current(chat) == 5000 + exact.count_message(reply)
    follow_up = user("and another thing")
    chat.append(follow_up)
    assert tracker.current(chat) == 5000 + exact.count_message(reply) + exact.count_message(
        follow_up
    )


def test_usage_after_a_replacement_scales_the_reported_ratio() -> None:
    exact = counter()
    tracker = UsageTracker(exact)
    long_message = assistant("x" * 400)
    chat = conversation(user("task"), long_message)
    local_then = exact.count_messages(chat.messages)
    tracker.record(1000, chat)
    chat.replace_message(1, assistant("short"))
    local_now = exact.count_messages(chat.messages)
    assert local_now < local_then
    assert tracker.current(chat) == round(local_now * 1000 / local_then)


def test_warning_fires_once_per_upward_crossing() -> None:
    latch = WarningLatch(0.85)
    assert latch.crossed(849, 1000) is False
    assert latch.crossed(850, 1000) is True
    assert latch.crossed(900, 1000) is False
    assert latch.crossed(700, 1000) is False
    assert latch.crossed(860, 1000) is True


def test_governor_pauses_after_a_run_freeing_under_five_percent_and_resumes_on_growth() -> None:
    governor = CompactionGovernor(resume_below=0.80)
    assert governor.record_run(1000, 960) is True  # freed 4 %
    assert governor.allows(960, 1000) is False
    assert governor.allows(1009, 1000) is False
    assert governor.allows(1010, 1000) is True  # grew by 5 % of the budget
    assert governor.record_run(1000, 950) is False  # freed exactly 5 %
    assert governor.allows(950, 1000) is True


def test_governor_resumes_when_usage_falls_below_the_trigger() -> None:
    governor = CompactionGovernor(resume_below=0.80)
    governor.record_run(900, 890)
    assert governor.allows(890, 1000) is False
    assert governor.allows(799, 1000) is True
