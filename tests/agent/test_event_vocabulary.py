"""One event vocabulary (docs/adr/0013): one class per idea, defined once, passed through as is.

The stream events a client sees are the very objects the provider yielded; no two classes in
`forge/` share the name of an event class (a `ReasoningDelta` in two layers was once two
different classes); a retry reaches the turn's client as an event.
"""

from __future__ import annotations

import ast
import typing
from collections import defaultdict
from pathlib import Path

from forge.agent.events import AgentEvent, MessageDelta, ReasoningDelta, RetryScheduled
from forge.llm import stream as llm_stream
from forge.llm.openai_provider import OpenAICompatibleProvider
from tests.agent.loop_harness import TEST_KEY, drive, make_agent
from tests.support.openai_server import OpenAIServer, RateLimited, ServerFault, Text

FORGE = Path(__file__).resolve().parents[2] / "forge"


def class_definitions() -> dict[str, list[str]]:
    """Every class name defined in forge/ → the files that define one by that name."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(FORGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(str(path.relative_to(FORGE.parent)))
    return found


def event_classes() -> list[type]:
    """Every class of the client's union and of the provider's stream."""
    return [*typing.get_args(AgentEvent), *typing.get_args(llm_stream.StreamEvent)]


def test_no_two_classes_in_forge_share_an_event_class_name() -> None:
    definitions = class_definitions()
    for cls in event_classes():
        where = definitions[cls.__name__]
        assert len(where) == 1, f"{cls.__name__} is defined {len(where)} times: {where}"
        module_file = cls.__module__.replace(".", "/") + ".py"
        assert where == [module_file], (cls.__name__, where)


def test_the_stream_events_a_client_sees_are_the_providers_classes() -> None:
    assert MessageDelta is llm_stream.MessageDelta
    assert ReasoningDelta is llm_stream.ReasoningDelta
    assert RetryScheduled is llm_stream.RetryScheduled
    client_stream = set(typing.get_args(llm_stream.ClientStreamEvent))
    assert client_stream <= set(typing.get_args(AgentEvent))
    assert not hasattr(llm_stream, "TextDelta")


async def test_a_turn_forwards_the_providers_retries_and_deltas_as_they_are(
    llm_server: OpenAIServer, tmp_path: Path
) -> None:
    provider = OpenAICompatibleProvider(
        "test-model", llm_server.base_url, TEST_KEY, max_retries=3, backoff_base=0.001
    )
    agent = make_agent(provider, tmp_path)
    llm_server.enqueue(ServerFault(503), RateLimited("0"), Text("all good", reasoning="hm"))
    events = await drive(agent.run_turn("hello"))
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert [(r.attempt, r.max_attempts, r.status_code) for r in retries] == [
        (1, 3, 503),
        (2, 3, 429),
    ]
    assert all(r.model == "test-model" for r in retries)
    kinds = [type(e) for e in events]
    assert kinds.index(RetryScheduled) < kinds.index(ReasoningDelta) < kinds.index(MessageDelta)
    text = "".join(e.text for e in events if type(e) is llm_stream.MessageDelta)
    assert text == "all good"
    assert [m.content for m in agent.conversation.messages if m.role == "assistant"] == ["all good"]
    await provider.aclose()
