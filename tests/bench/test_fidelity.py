"""The replay's fidelity checks: what counts as kept verbatim."""

from __future__ import annotations

import json

from bench.fidelity import FidelityTracker, excluded_messages, is_verbatim, message_keys
from bench.sessions import annotate
from forge.llm.messages import Message, ToolCall

EXCLUDED = {"task_completion", "ask_question", "converse"}


def _session() -> list[Message]:
    read = ToolCall(id="r1", name="read_file", arguments=json.dumps({"path": "src/a.py"}))
    grep = ToolCall(id="r2", name="search_files", arguments=json.dumps({"path": "src/b.py"}))
    done = ToolCall(id="t1", name="task_completion", arguments='{"summary": "fixed"}')
    return [
        Message(role="system", content="sys"),
        Message(role="user", content="Fix a.py."),  # 1: instruction
        Message(role="assistant", content="Reading.", tool_calls=(read,)),
        Message(role="tool", content="print(1)", tool_call_id="r1"),  # 3
        Message(role="assistant", content="Searching.", tool_calls=(grep,)),
        Message(role="tool", content="b.py:1: x", tool_call_id="r2"),  # 5
        Message(role="assistant", content="", tool_calls=(done,)),  # 6: excluded
        Message(role="tool", content="ok", tool_call_id="t1"),  # 7: excluded
        Message(role="user", content="Next task: also fix b.py."),  # 8
        Message(role="assistant", content="On it."),
    ]


def test_verbatim_needs_the_same_role_content_call_id_and_calls() -> None:
    messages = _session()
    keys = message_keys(messages)
    assert all(is_verbatim(m, keys) for m in messages)
    changed = [*messages[:3], messages[3].evolve(content="[omitted]"), *messages[4:]]
    assert not is_verbatim(messages[3], message_keys(changed))
    other_id = messages[3].evolve(tool_call_id="zz")
    assert not is_verbatim(other_id, keys)
    no_calls = messages[2].evolve(tool_calls=())
    assert not is_verbatim(messages[2], message_keys([*messages[:2], no_calls]))


def test_excluded_messages_are_the_calls_and_results_of_excluded_tools() -> None:
    messages = _session()
    assert excluded_messages(messages, EXCLUDED) == [messages[6], messages[7]]


def test_tracker_counts_instructions_exclusions_newest_outputs_latest_user_and_paths() -> None:
    session = annotate("s", _session())
    session.observations.discard(8)  # a "Next task" message, as the combined session has
    session.instructions.add(8)
    messages = session.messages
    tracker = FidelityTracker(session, EXCLUDED)
    # Request before message 4: everything verbatim.
    tracker.observe(4, messages[:4])
    # Request before message 9: the first tool output masked, the excluded result dropped,
    # the first instruction summarized away; b.py's path survives only in the tool output.
    summary = Message(role="user", content="Summary: I read src/a.py.")
    masked = messages[3].evolve(content="[omitted]")
    final = [messages[0], summary, messages[2], masked, *messages[4:7], messages[8]]
    tracker.observe(9, final)
    result = tracker.finish(9, final)
    assert (result.user_verbatim, result.user_total) == (1, 2)
    assert (result.excluded_verbatim, result.excluded_total) == (1, 2)
    assert (result.newest_tools_verbatim, result.requests) == (1, 2)
    assert result.latest_user_intact
    assert (result.paths_recalled, result.paths_total) == (2, 2)


def test_latest_user_message_ignores_observations_and_must_survive_every_request() -> None:
    messages = [
        Message(role="user", content="Please fix it."),
        Message(role="assistant", content="```ls```"),
        Message(role="user", content="a.py b.py"),  # an observation
        Message(role="assistant", content="```cat a.py```"),
    ]
    session = annotate("text", messages)
    tracker = FidelityTracker(session, EXCLUDED)
    tracker.observe(3, [messages[0], messages[1], Message(role="user", content="[omitted]")])
    assert tracker.result.latest_user_intact
    assert tracker.result.newest_tools_verbatim == 0
    tracker.observe(3, [Message(role="user", content="Summary."), *messages[1:3]])
    assert not tracker.result.latest_user_intact
    assert tracker.result.latest_user_kept == 1
