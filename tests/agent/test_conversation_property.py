"""The conversation invariant under random operations (hypothesis state machine).

Random sequences of what really happens to a conversation: complete turns with tool calls,
turns cancelled part-way (mid-stream, between tool calls), summaries replacing a range at safe
boundaries, pruning, arbitrary cuts followed by repair, and resuming from the session file
(also after a crash tore its last line).
After every step the list is provider-valid (`find_problems` is empty), and a resume rebuilds
exactly what was in memory.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from forge.agent.history.session_file import SessionLog, SessionStore
from forge.agent.turn.interruption import answer_pending_calls, ensure_valid, keep_partial_answer
from forge.context.conversation import Conversation, find_problems, safe_boundaries
from forge.llm.messages import Message, MessageKind, ToolCall, assistant, system, user

TOOL_NAMES = ("read_file", "write_file", "execute_command", "task_completion")


class ConversationMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="forge-property-"))
        self.store = SessionStore(self.directory)
        self.log: SessionLog = self.store.create(self.directory, "test-model")
        self.conversation = Conversation()
        self.log.attach(self.conversation)
        self.conversation.append(system("system prompt"))
        self.calls = 0

    def teardown(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def _new_calls(self, count: int, names: list[str]) -> tuple[ToolCall, ...]:
        calls = []
        for index in range(count):
            self.calls += 1
            name = names[index % len(names)]
            calls.append(ToolCall(f"call_{self.calls}", name, '{"path": "a.txt"}'))
        return tuple(calls)

    @rule(
        text=st.text(min_size=1, max_size=20),
        calls=st.integers(min_value=0, max_value=3),
        names=st.lists(st.sampled_from(TOOL_NAMES), min_size=1, max_size=3),
        answer=st.text(max_size=10),
    )
    def complete_turn(self, text: str, calls: int, names: list[str], answer: str) -> None:
        self.conversation.append(user(text))
        if calls:
            tool_calls = self._new_calls(calls, names)
            self.conversation.append(assistant(tool_calls=tool_calls))
            for call in tool_calls:
                self.conversation.append(
                    Message(role="tool", content="ok", tool_call_id=call.id, name=call.name)
                )
        if answer:
            self.conversation.append(assistant(answer))

    @rule(
        text=st.text(min_size=1, max_size=20),
        calls=st.integers(min_value=1, max_value=4),
        names=st.lists(st.sampled_from(TOOL_NAMES), min_size=1, max_size=3),
        finished=st.integers(min_value=0, max_value=4),
        partial=st.text(max_size=10),
    )
    def cancelled_turn(
        self, text: str, calls: int, names: list[str], finished: int, partial: str
    ) -> None:
        """A turn stopped between tool calls or mid-stream, then settled as the loop does."""
        self.conversation.append(user(text))
        tool_calls = self._new_calls(calls, names)
        self.conversation.append(assistant(tool_calls=tool_calls))
        for call in tool_calls[: min(finished, calls)]:
            self.conversation.append(
                Message(role="tool", content="done", tool_call_id=call.id, name=call.name)
            )
        answer_pending_calls(self.conversation)
        keep_partial_answer(self.conversation, partial)

    @rule(
        text=st.text(min_size=1, max_size=20),
        rounds=st.integers(min_value=0, max_value=2),
        partial=st.text(max_size=10),
        reasoning=st.text(max_size=10),
    )
    def cancelled_mid_stream(self, text: str, rounds: int, partial: str, reasoning: str) -> None:
        """A turn cancelled while a reply streams, after `rounds` finished tool rounds: the
        loop keeps the streamed text (if any) as a partial answer, then settles."""
        self.conversation.append(user(text))
        for _ in range(rounds):
            (call,) = self._new_calls(1, ["read_file"])
            self.conversation.append(assistant(tool_calls=(call,)))
            self.conversation.append(
                Message(role="tool", content="ok", tool_call_id=call.id, name=call.name)
            )
        kept = keep_partial_answer(self.conversation, partial, reasoning)
        ensure_valid(self.conversation)
        if kept:
            assert self.conversation[-1].meta.get("partial") is True

    @rule(data=st.data())
    def summarize_a_range(self, data: st.DataObject) -> None:
        boundaries = [b for b in safe_boundaries(self.conversation.messages) if b >= 1]
        if len(boundaries) < 2:
            return
        start = data.draw(st.sampled_from(boundaries[:-1]))
        end = data.draw(st.sampled_from([b for b in boundaries if b > start]))
        removed = self.conversation.messages[start:end]
        summary = Message(
            role="user",
            content=f"[summary of {len(removed)} messages]",
            kind=MessageKind.SUMMARY,
            replaces=tuple(message.id for message in removed),
        )
        self.conversation.replace_range(start, end, [summary])

    @rule(data=st.data())
    def prune_a_tool_result(self, data: st.DataObject) -> None:
        results = [i for i, m in enumerate(self.conversation.messages) if m.role == "tool"]
        if not results:
            return
        index = data.draw(st.sampled_from(results))
        original = self.conversation[index]
        placeholder = original.evolve(content=f"[pruned output of {original.name}]")
        self.conversation.replace_message(index, placeholder)

    @rule(data=st.data())
    def cut_anywhere_then_repair(self, data: st.DataObject) -> None:
        """A careless edit (not at safe boundaries) followed by the repair the loop applies."""
        size = len(self.conversation)
        if size < 3:
            return
        start = data.draw(st.integers(min_value=1, max_value=size - 1))
        end = data.draw(st.integers(min_value=start, max_value=size))
        marker = Message(role="user", content="[pruned]", kind=MessageKind.PRUNED)
        self.conversation.replace_range(start, end, [marker])
        ensure_valid(self.conversation)

    @precondition(lambda self: len(self.conversation) > 1)
    @rule()
    def resume(self) -> None:
        self.conversation.append(user("checkpoint"))  # makes sure the file exists
        expected = [message.to_record() for message in self.conversation]
        resumed, log = self.store.resume(self.log.id)
        assert [message.to_record() for message in resumed] == expected
        self.conversation, self.log = resumed, log
        self.log.attach(self.conversation)

    @precondition(lambda self: len(self.conversation) > 1)
    @rule(torn=st.text(min_size=1, max_size=30))
    def resume_after_a_torn_write(self, torn: str) -> None:
        """A crash mid-write leaves part of a line: resume skips it and loses nothing else."""
        self.conversation.append(user("checkpoint"))
        expected = [message.to_record() for message in self.conversation]
        with self.log.path.open("a", encoding="utf-8") as handle:
            handle.write('{"type": "message", "message": {"content": ' + repr(torn)[:20])
        resumed, log = self.store.resume(self.log.id)
        assert [message.to_record() for message in resumed] == expected
        self.conversation, self.log = resumed, log
        self.log.attach(self.conversation)

    @invariant()
    def provider_valid(self) -> None:
        assert find_problems(self.conversation.messages) == []
        assert self.conversation[0].role == "system"


ConversationMachine.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_conversation_invariant = ConversationMachine.TestCase
