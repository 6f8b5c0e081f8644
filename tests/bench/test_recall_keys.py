"""Recoverability: a lost output is recoverable only through a recall key in the request, and
only for a policy that has `recall`; a re-fetch is priced at its real tokens."""

from __future__ import annotations

import json
from pathlib import Path

from bench.costing import CostMeter, Refetch
from bench.fidelity import FidelityTracker
from bench.recall_keys import keys_in, reached, refetch_messages, unrecoverable
from bench.references import references
from bench.replay import run
from bench.sessions import annotate
from forge.llm.messages import Message, ToolCall
from tests.bench.sessions_support import write_trajectory

ID = "3f9a2c01d4e5b6a7"


def test_a_key_is_a_hex_word_of_its_own_naming_the_start_of_the_id() -> None:
    assert reached(ID, keys_in("[Old output omitted; recall 3f9a2c]"))
    assert reached(ID, keys_in("folded: keys 9b01de, 3f9a2c01."))  # any unique start, 6+
    assert reached(ID, keys_in(f"recall {ID}"))
    assert not reached(ID, keys_in("recall 3f9a2"))  # too short
    assert not reached(ID, keys_in("sha 3f9a2c77"))  # another id's start
    assert not reached(ID, keys_in("x3f9a2c and 3f9a2cz"))  # not a word of its own


def test_without_recall_every_lost_output_is_unrecoverable() -> None:
    text = "[omitted; recall 3f9a2c]"
    assert unrecoverable([ID, "aaaaaa0000000000"], text, has_recall=True) == ["aaaaaa0000000000"]
    assert unrecoverable([ID], text, has_recall=False) == [ID]


def _session() -> list[Message]:
    read = ToolCall(id="r1", name="read_file", arguments=json.dumps({"path": "src/a.py"}))
    return [
        Message(role="system", content="sys"),
        Message(role="user", content="Fix a.py."),
        Message(role="assistant", content="Reading.", tool_calls=(read,)),
        Message(role="tool", content="def parse_header(): ...", tool_call_id="r1", name="read"),
        Message(role="assistant", content="parse_header is wrong."),  # refers to the output
    ]


def test_the_tracker_counts_lost_outputs_no_key_reaches() -> None:
    session = annotate("s", _session())
    messages = session.messages
    output = messages[3]
    placeholder = output.evolve(content=f"[omitted; recall {output.id[:6]}]")
    request = [*messages[:3], placeholder]
    for has_recall, expected in ((True, 0), (False, 1)):
        tracker = FidelityTracker(session, set(), references(session), has_recall=has_recall)
        assert tracker.observe(4, request) == [3]
        assert tracker.result.unrecoverable_lost == expected
        assert tracker.reachable == ({3} if has_recall else set())
    folded = Message(role="user", content="[Summary of earlier work] I read a file.")
    tracker = FidelityTracker(session, set(), references(session), has_recall=True)
    tracker.observe(4, [messages[0], folded])
    assert (tracker.result.referenced_lost, tracker.result.unrecoverable_lost) == (1, 1)


def test_a_re_fetch_is_a_recall_call_or_the_original_call_at_its_real_size() -> None:
    session = annotate("s", _session())
    output = session.messages[3]
    call, result = refetch_messages(session, 3, by_key=True)
    assert call.tool_calls[0].name == "recall"
    assert json.loads(call.tool_calls[0].arguments) == {"id": output.id[:6]}
    assert result.content == output.content and result.tool_call_id == call.tool_calls[0].id
    call, result = refetch_messages(session, 3, by_key=False)
    assert call.tool_calls[0].name == "read_file" and result is output
    meter = CostMeter()
    tools, context, priming = tuple([1] * 1500), tuple([2] * 600), (-12, -13, -14)
    meter.request([tools, context, priming], False, [Refetch((tuple([5] * 9), (3,) * 200), 9)])
    assert meter.recall_requests == 1 and meter.recall_output_tokens == 9
    assert meter.recall.openai_cached + meter.recall.openai_uncached == 2100 + 9 + 200 + 3
    costs = meter.costs(agent_output=0, summary_input=0, summary_output=0)
    assert costs["recall_cost_usd_openai"] > costs["cost_usd_openai"]


def test_forges_placeholders_keep_keys_that_the_replay_recognises(tmp_path: Path) -> None:
    """Forge masks old outputs with `recall <key>`: under pressure its lost outputs stay
    recoverable; masking-10, with no recall, loses them for good."""
    messages = [
        Message(role="system", content="You are a coding agent."),
        Message(role="user", content="Review every module."),
    ]
    for number in range(30):
        call = ToolCall(
            id=f"c{number}", name="read_file", arguments=json.dumps({"path": f"m{number}.py"})
        )
        body = " ".join(f"symbol{number}_{word}" for word in range(300))
        mention = f" Recall symbol{number - 12}_5." if number >= 12 else ""
        messages.append(
            Message(role="assistant", content=f"Reading {number}.{mention}", tool_calls=(call,))
        )
        messages.append(Message(role="tool", content=body, tool_call_id=call.id, name="read"))
    messages.append(Message(role="assistant", content="Done."))
    path = write_trajectory(tmp_path / "a.messages.json", messages)
    out = tmp_path / "rows.json"
    argv = [str(path), "--budget", "20k", "--no-combined", "--json", str(out)]
    run([*argv, "--policy", "forge", "--policy", "masking"])
    rows = {row["policy"]: row for row in json.loads(out.read_text("utf-8"))}
    assert rows["masking"]["referenced_lost"] > 0
    assert rows["masking"]["unrecoverable_lost"] == rows["masking"]["referenced_lost"]
    forge = rows["forge"]
    assert forge["referenced_lost"] > 0, forge["strategy_runs"]
    assert forge["unrecoverable_lost"] < forge["referenced_lost"]
