"""The corpus converters, on small hand-made inputs in each source format."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.convert import aider, mini_swe_agent, openhands, sweagent
from bench.sessions import load_session

ROOT = Path(__file__).resolve().parents[2]


def test_sweagent_keeps_roles_calls_and_splits_multi_call_results() -> None:
    data = {
        "history": [
            {"role": "system", "content": "sys", "agent": "main"},
            {"role": "user", "content": [{"type": "text", "text": "task"}], "agent": "main"},
            {"role": "user", "content": "demonstration", "agent": "main"},
            {
                "role": "assistant",
                "content": "look",
                "agent": "main",
                "tool_calls": [
                    {"id": "a", "function": {"name": "open", "arguments": '{"path":"x"}'}},
                    {"id": "b", "function": {"name": "open", "arguments": '{"path":"y"}'}},
                ],
            },
            {"role": "tool", "content": "out", "agent": "main", "tool_call_ids": ["a", "b"]},
            {"role": "user", "content": "note", "agent": "summarizer"},
            {"role": "assistant", "content": "done", "agent": "main"},
        ]
    }
    records = sweagent.convert(data)
    assert [(r["role"], r.get("kind")) for r in records] == [
        ("system", None),
        ("user", "instruction"),
        ("user", "instruction"),
        ("assistant", None),
        ("tool", None),
        ("tool", None),
        ("assistant", None),
    ]
    assert records[1]["content"] == "task"
    assert [r["tool_call_id"] for r in records[4:6]] == ["a", "b"]
    assert records[4]["content"] == "out" and records[5]["content"] == ""


def test_openhands_groups_a_response_s_calls_and_answers_each_call_once() -> None:
    response = {
        "id": "r1",
        "choices": [
            {
                "message": {
                    "content": "Listing.",
                    "tool_calls": [
                        {"id": "t1", "function": {"name": "execute_bash", "arguments": "{}"}}
                    ],
                }
            }
        ],
    }
    metadata = {"function_name": "execute_bash", "tool_call_id": "t1", "model_response": response}
    events = [
        {"source": "agent", "action": "system", "args": {"content": "sys"}, "message": "sys"},
        {"source": "user", "action": "message", "args": {"content": "do it"}, "message": "do it"},
        {"source": "environment", "observation": "recall", "content": "Added workspace context"},
        {"source": "agent", "action": "run", "tool_call_metadata": metadata, "args": {}},
        {"source": "agent", "observation": "run", "tool_call_metadata": metadata, "content": "a b"},
        {"source": "agent", "observation": "agent_state_changed", "content": ""},
        {"source": "agent", "action": "message", "args": {"content": "All done."}, "message": ""},
    ]
    records = openhands.convert(events)
    assert [r["role"] for r in records] == [
        "system",
        "user",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert records[2]["kind"] == "observation"
    assert records[3]["content"] == "Listing."
    assert records[3]["tool_calls"][0]["id"] == "t1"
    assert records[4] == {
        "role": "tool",
        "tool_call_id": "t1",
        "name": "execute_bash",
        "content": "a b",
    }


def test_mini_swe_agent_marks_the_task_and_the_observations() -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "```bash\nls\n```"},
        {"role": "user", "content": "<output>a</output>"},
    ]
    records = mini_swe_agent.convert({"messages": messages})
    assert [r.get("kind") for r in records] == [None, "instruction", None, "observation"]


TRANSCRIPT = """
# aider chat started at 2024-01-01 10:00:00

> aider --model gpt-4<BR>
> Added app.py to the chat.<BR>

#### make the title bold<BR>
#### and blue<BR>

Here is the change:

app.py
```python
TITLE = "<b>hi</b>"
```

> Applied edit to app.py<BR>
> Commit 1a2b3c4 made the title bold<BR>

#### now add a test<BR>

Added tests/test_app.py.

# aider chat started at 2024-01-02 09:00:00

#### second session<BR>

ok
""".replace("<BR>", "  ")  # Aider ends its lines with markdown breaks


def test_aider_splits_sessions_and_turns_output_into_observations(tmp_path: Path) -> None:
    found = aider.sessions(TRANSCRIPT)
    assert len(found) == 2
    records = aider.convert(found[0])
    assert [(r["role"], r.get("kind")) for r in records] == [
        ("user", "instruction"),
        ("assistant", None),
        ("user", "observation"),
        ("user", "instruction"),
        ("assistant", None),
    ]
    assert records[0]["content"] == "make the title bold\nand blue"
    assert records[2]["content"] == "Applied edit to app.py\nCommit 1a2b3c4 made the title bold"
    assert 'TITLE = "<b>hi</b>"' in records[1]["content"]
    # Through the command line and the replay's loader: two instructions, one observation.
    source = tmp_path / "history.md"
    source.write_text(TRANSCRIPT, encoding="utf-8")
    out = tmp_path / "aider.messages.json"
    subprocess.run(
        [sys.executable, "-m", "bench.convert.aider", str(source), str(out), "--session", "1"],
        check=True,
        cwd=ROOT,
    )
    session = load_session(out)
    assert session.instructions == {0, 3}
    assert session.observations == {2}
    assert json.loads(out.read_text("utf-8"))[0]["kind"] == "instruction"


def test_the_repository_corpus_loads_with_its_sources_listed() -> None:
    corpus = ROOT / "bench" / "corpus"
    files = sorted(corpus.glob("*.messages.json"))
    assert len(files) >= 20
    agents = {path.name.split("__")[0] for path in files}
    assert len(agents) >= 4
    readme = (corpus / "README.md").read_text(encoding="utf-8")
    for path in files:
        session = load_session(path)
        assert session.origin == "bench/corpus"
        assert any(m.role == "assistant" for m in session.messages)
        assert path.name in readme
