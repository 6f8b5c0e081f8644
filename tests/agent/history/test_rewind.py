"""Rewinding the conversation through the session log: the turns listed (with the ones that ran
commands marked), the conversation before a chosen turn — also after a real compaction summarized
it away — kept provider-valid (AGENTS.md invariant 1) and written so a resume rebuilds it."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from pydantic import SecretStr

from forge.agent.history.rewind import rewind_conversation, session_turns
from forge.agent.history.session_file import SessionLog, SessionStore
from forge.config.settings import ContextSettings, LLMSettings, Settings, ToolsSettings
from forge.context.conversation import Conversation, find_problems, safe_boundaries
from forge.llm.messages import Message, MessageKind, ToolCall, assistant, system, user
from forge.session.build import SessionOptions, build_session
from forge.session.core import Session
from tests.agent.loop_harness import drive
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

KEY = "sk-test-rewind-0123456789abcdef"


def settings_for(server: OpenAIServer) -> Settings:
    llm = LLMSettings(base_url=server.base_url, api_key=SecretStr(KEY), max_retries=0)
    # Everything but the latest turn counts as old, so /compact has something to summarize.
    context = ContextSettings(messages_old_threshold=1)
    return Settings(llm=llm, tools=ToolsSettings(command_timeout=30), context=context)


def ids(session: Session) -> list[str]:
    return [message.id for message in session.agent.conversation.messages]


def resumed_records(session: Session) -> list[dict[str, object]]:
    conversation, _ = SessionStore().resume(session.session_id)
    return [message.to_record() for message in conversation]


async def test_rewind_across_a_real_compaction_restores_the_earlier_conversation(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "echo hello"})]),
        Text("ran it. " * 400),  # long turns: the recent tail cannot hold them all
        ToolCalls([Call("write_file", {"path": "a.txt", "content": "a"})]),
        Text("wrote it. " * 400),
        Text("third answer"),
    )
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        await drive(session.agent.run_turn("first run a command please"))
        before_second = ids(session)
        records_before_second = [m.to_record() for m in session.agent.conversation.messages]
        await drive(session.agent.run_turn("second write a file"))
        await drive(session.agent.run_turn("third just talk"))

        llm_server.enqueue(Text("Summary: a command ran and a.txt was written."))
        await drive(session.agent.compact())
        kinds = [m.kind for m in session.agent.conversation.messages]
        assert set(kinds) != {MessageKind.NORMAL}, "the compaction really summarized"
        assert not set(before_second) <= set(ids(session)), "turn one was compacted"

        turns = session_turns(session.log.path)
        assert [t.title(3) for t in turns] == [
            "first run a …",
            "second write a …",
            "third just talk",
        ]
        assert [t.ran_commands for t in turns] == [True, False, False]
        assert turns[-1].in_context

        rewind_conversation(session.agent.conversation, session.log, turns[1].id)
        conversation = session.agent.conversation
        assert find_problems(conversation.messages) == []
        assert ids(session) == before_second
        assert [m.to_record() for m in conversation][1:] == records_before_second[1:]
        assert resumed_records(session) == [m.to_record() for m in conversation]
        assert [t.title(1) for t in session_turns(session.log.path)] == ["first …"]

        # The rewound line goes on: a new turn, then a rewind to the very start.
        llm_server.enqueue(Text("fourth answer"))
        await drive(session.agent.run_turn("fourth after the rewind"))
        turns = session_turns(session.log.path)
        assert [t.title(1) for t in turns] == ["first …", "fourth …"]
        rewind_conversation(session.agent.conversation, session.log, turns[0].id)
        assert [m.role for m in session.agent.conversation.messages] == ["system"]
        assert session_turns(session.log.path) == []
        assert resumed_records(session) == [
            m.to_record() for m in session.agent.conversation.messages
        ]
    finally:
        await session.aclose()


TOOL_NAMES = ("read_file", "write_file", "execute_command")


class RewindMachine(RuleBasedStateMachine):
    """Turns, summaries and rewinds in any order: after every rewind the conversation is
    provider-valid, equals the one recorded before that turn, and a resume rebuilds it."""

    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="forge-rewind-"))
        self.store = SessionStore(self.directory)
        self.log: SessionLog = self.store.create(self.directory, "test-model")
        self.conversation = Conversation()
        self.log.attach(self.conversation)
        self.conversation.append(system("system prompt"))
        self.calls = 0
        self.lineage: list[str] = []
        """The user message ids of the turns on the current line of history."""
        self.before: dict[str, list[str]] = {}
        """Each turn's conversation (ids) just before it began."""

    def teardown(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    @rule(
        text=st.text(min_size=1, max_size=12).filter(str.strip),
        names=st.lists(st.sampled_from(TOOL_NAMES), max_size=3),
        answer=st.text(max_size=8),
    )
    def turn(self, text: str, names: list[str], answer: str) -> None:
        message = user(text)
        self.before[message.id] = [m.id for m in self.conversation]
        self.lineage.append(message.id)
        self.conversation.append(message)
        if names:
            calls = []
            for name in names:
                self.calls += 1
                calls.append(ToolCall(f"call_{self.calls}", name, "{}"))
            self.conversation.append(assistant(tool_calls=tuple(calls)))
            for call in calls:
                self.conversation.append(
                    Message(role="tool", content="ok", tool_call_id=call.id, name=call.name)
                )
        self.conversation.append(assistant(answer or "done"))

    @rule(data=st.data())
    def summarize(self, data: st.DataObject) -> None:
        latest = self.conversation.latest_user_index() or 0
        boundaries = [b for b in safe_boundaries(self.conversation.messages) if 1 <= b <= latest]
        if len(boundaries) < 2:
            return
        start = data.draw(st.sampled_from(boundaries[:-1]))
        end = data.draw(st.sampled_from([b for b in boundaries if b > start]))
        removed = self.conversation.messages[start:end]
        summary = Message(
            role="user",
            content="[summary]",
            kind=MessageKind.SUMMARY,
            replaces=tuple(m.id for m in removed),
        )
        self.conversation.replace_range(start, end, [summary])

    @precondition(lambda self: bool(self.lineage))
    @rule(data=st.data())
    def rewind(self, data: st.DataObject) -> None:
        listed = [turn.id for turn in session_turns(self.log.path)]
        assert listed == self.lineage
        chosen = data.draw(st.sampled_from(listed))
        rewind_conversation(self.conversation, self.log, chosen)
        assert find_problems(self.conversation.messages) == []
        assert [m.id for m in self.conversation] == self.before[chosen]
        self.lineage = self.lineage[: self.lineage.index(chosen)]
        resumed, log = self.store.resume(self.log.id)
        assert [m.to_record() for m in resumed] == [m.to_record() for m in self.conversation]
        self.conversation, self.log = resumed, log
        self.log.attach(self.conversation)

    @invariant()
    def valid(self) -> None:
        assert find_problems(self.conversation.messages) == []


RewindMachine.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_rewind_keeps_the_invariant = RewindMachine.TestCase


async def test_only_commands_that_really_ran_mark_a_turn_and_titles_are_what_was_typed(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    from forge.agent.events import ApprovalDecision, ApprovalVerdict
    from forge.agent.modes import PermissionMode

    (workspace / "app.py").write_text("print('hi')\n")
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "echo refused"})]),
        Text("the mode refused it"),
        ToolCalls([Call("execute_command", {"command": "echo rejected"})]),
        Text("you rejected it"),
        ToolCalls([Call("execute_command", {"command": "echo ran"})]),
        Text("it ran"),
        Text("looked at it"),
    )
    session = build_session(settings_for(llm_server), workspace)
    try:
        session.agent.policy.mode = PermissionMode.READ_ONLY
        await drive(session.agent.run_turn("refused in read-only mode"))
        session.agent.policy.mode = PermissionMode.ASK
        await drive(
            session.agent.run_turn("rejected by me"),
            approve=lambda _: ApprovalDecision(ApprovalVerdict.REJECT, "no"),
        )
        await drive(session.agent.run_turn("approved and ran"))
        expansion = session.expand_mentions("explain @app.py please")
        assert "<attached_file" in expansion.text
        await drive(session.agent.run_turn(expansion.text))
        turns = session_turns(session.log.path)
    finally:
        await session.aclose()
    assert [t.ran_commands for t in turns] == [False, False, True, False]
    assert turns[-1].text == "explain @app.py please"
    assert turns[-1].title() == "explain @app.py please"


def test_a_command_skipped_by_an_ended_turn_did_not_run_but_one_cut_off_did(
    tmp_path: Path,
) -> None:
    from forge.agent.turn.interruption import NOT_RUN_RESULT, cancelled_result
    from forge.agent.turn.loop import SKIPPED_RESULT

    log = SessionStore(tmp_path).create(tmp_path, "test-model")
    conversation = Conversation()
    log.attach(conversation)
    conversation.append(system("system prompt"))
    for text, result, not_run in (
        ("skipped", SKIPPED_RESULT, False),
        ("cut off", "[cancelled]", False),
        ("interrupted while it waited for approval", NOT_RUN_RESULT, True),
    ):
        conversation.append(user(text))
        call = ToolCall(f"call_{len(conversation)}", "execute_command", '{"command": "ls"}')
        conversation.append(assistant("", tool_calls=(call,)))
        conversation.append(cancelled_result(call, result, not_run=not_run))
    assert [t.ran_commands for t in session_turns(log.path)] == [False, True, False]
