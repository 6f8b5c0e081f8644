"""The pinned work ledger (issue 37, ADR 0050): after a summary folds the work away, the
ledger stands right after the head with every file changed, the test runs and the reverted
change; its bytes do not change until the next compaction; a resumed session reads it back."""

from __future__ import annotations

from forge.agent.input.shell_escape import observation
from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.ledger_pin import LedgerPin
from forge.llm.messages import Message, MessageKind, assistant, user
from tests.context.builders import (
    conversation,
    group,
    make_manager,
    provider_for,
    task_start,
    words,
)
from tests.context.test_work_ledger import SESSION
from tests.support.openai_server import OpenAIServer, Text


def settings(**changes: object) -> ContextSettings:
    values: dict[str, object] = {
        "max_tokens": 4000,
        "tool_call_summaries": False,
        "observation_masking": False,
        "ingest_max_share": 1.0,
    }
    values.update(changes)
    return ContextSettings(**values)  # type: ignore[arg-type]


def padding(count: int) -> list:
    return [
        m
        for n in range(count)
        for m in group("read_file", words(300, f"p{n:02d}"), arguments={"path": f"docs/p{n}.md"})
    ]


def pinned(chat: Conversation) -> list:
    return [m for m in chat.messages if m.kind is MessageKind.LEDGER]


async def test_the_ledger_is_pinned_after_a_summary_and_holds_until_the_next(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("Fixed the week parsing.")
    chat = conversation(task_start(), SESSION, padding(10), assistant("the docs are read"))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, settings())
        await manager.evaluate_and_summarize(chat)
        summaries = [m for m in chat.messages if m.kind is MessageKind.SUMMARY]
        assert summaries, "the threshold summary should have run"
        (ledger,) = pinned(chat)
        assert chat.messages.index(ledger) == 2  # right after the system prompt and the task
        assert ledger.role == "user"
        text = ledger.content
        for expected in (
            "src/dates.py (edited 2x, +3 -3, reverted)",
            "src/weeks.py (created, +3 -0)",
            # 2.5 % of 4,000 tokens: the older runs are counted, the last test run kept
            "3 earlier commands: 1 exit 0, 2 failed, 3 test runs",
            "Last test run: `pytest -q` (exit 0, tests passed: 2 passed in 0.1s",
            "E ValueError: bad week '2024-W05'",
            "change to src/dates.py reverted",
        ):
            assert expected in text
        assert all("Ledger (from the tool calls)" not in s.content for s in summaries)
        assert any(sent.get("content") == text for sent in chat.to_api())
        assert manager.ledger_text() == text

        # Work without a compaction: the pinned bytes stay as they are (the cache holds).
        chat.append(user("now also handle ISO days"))
        for message in group("execute_command", "ok\n[exit code 0]", arguments={"command": "make"}):
            chat.append(message)
        await manager.evaluate_and_summarize(chat)
        assert pinned(chat) == [ledger]

        # The next compaction rewrites it, in place, with the work since.
        for message in padding(12):
            chat.append(message)
        chat.append(assistant("read more docs"))
        await manager.evaluate_and_summarize(chat)
        (rewritten,) = pinned(chat)
        assert rewritten is not ledger and chat.messages.index(rewritten) == 2
        assert "`make` (exit 0" in rewritten.content
        assert chat.is_valid()

    # A resumed session (a fresh pin over the same messages) reads the ledger back whole.
    resumed = LedgerPin()
    resumed.observe(chat)
    assert resumed.text(4000, manager.counter.count_text) == rewritten.content


async def test_no_ledger_without_a_compaction_or_when_switched_off(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("Fixed the week parsing.")
    small = conversation(task_start(), SESSION)
    big = conversation(task_start(), SESSION, padding(10), assistant("the docs are read"))
    async with provider_for(llm_server) as provider:
        await make_manager(provider, settings()).evaluate_and_summarize(small)
        off = make_manager(provider, settings(work_ledger=False))
        await off.evaluate_and_summarize(big)
    assert not pinned(small)
    assert any(m.kind is MessageKind.SUMMARY for m in big.messages) and not pinned(big)


def test_observations_are_commands_too_the_users_and_a_text_actions() -> None:
    """The user's `!command` (an observation naming its command) and a text-action agent's
    output (an observation after a reply ending in a fenced command) are recorded like a
    shell tool's call, once each however often the ledger looks."""
    chat = conversation(
        task_start(),
        observation("pytest -q", "1 failed, 3 passed\n[exit code 1]"),
        assistant("Let me fix it:\n\n```bash\nsed -i 's/a/b/' src/week.py\n```"),
        Message(role="user", content="", kind=MessageKind.OBSERVATION),
        assistant("And check:\n```\ncat src/missing.py\n```"),
        Message(
            role="user",
            content="cat: src/missing.py: No such file or directory",
            kind=MessageKind.OBSERVATION,
        ),
        user("thanks"),
    )
    pin = LedgerPin()
    pin.observe(chat)
    chat.append(assistant("```\nls\n```"))
    chat.append(Message(role="user", content="src", kind=MessageKind.OBSERVATION))
    pin.observe(chat)
    pin.observe(chat)
    ledger = pin.ledger
    assert [run.command for run in ledger.commands] == [
        "pytest -q",
        "sed -i 's/a/b/' src/week.py",
        "cat src/missing.py",
        "ls",
    ]
    assert ledger.commands[0].test and ledger.commands[0].exit_code == 1
    assert ledger.files["src/week.py"].changed
    assert (
        ledger.errors[-1] == "cat: src/missing.py: No such file or directory (`cat src/missing.py`)"
    )
