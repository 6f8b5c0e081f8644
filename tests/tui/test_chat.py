"""The chat widget rendering agent events: streaming, tool calls, diffs, summaries, bounds."""

from __future__ import annotations

import json
from pathlib import Path

from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Collapsible, Label, Markdown
from textual.widgets.markdown import MarkdownFence

import forge.tui
from forge.agent.events import (
    AssistantMessageDone,
    ErrorEvent,
    MessageDelta,
    ReasoningDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
    TurnFinished,
)
from forge.llm.messages import Message, MessageKind, ToolCall
from forge.tui.widgets.chat import INTERRUPTED_NOTE, MAX_CHAT_BLOCKS, ChatView
from forge.tui.widgets.chat_blocks import (
    AssistantBlock,
    NoticeBlock,
    SummaryBlock,
    ToolCallBlock,
    UserMessageBlock,
)
from forge.tui.widgets.diff_view import DiffView
from tests.tui.event_delivery import show_event


class ChatHost(App[None]):
    def compose(self) -> ComposeResult:
        yield ChatView()


class StyledChatHost(ChatHost):
    """The chat with the app's own styles (borders and padding as Forge draws them)."""

    CSS_PATH = str(Path(forge.tui.__file__).parent / "app.tcss")


def command_call(command: str, call_id: str = "call_1") -> ToolCall:
    return ToolCall(call_id, "execute_command", f'{{"command": "{command}"}}')


async def test_streamed_deltas_become_one_markdown_answer() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        for piece in ("Hello ", "**world**", "\n\n```python\nprint(1)\n```\n"):
            await show_event(chat, MessageDelta(piece))
        await show_event(chat, AssistantMessageDone(Message(role="assistant", content="x")))
        await pilot.pause()
        answers = list(chat.query(AssistantBlock))
        assert len(answers) == 1
        assert answers[0].answer_text == "Hello **world**\n\n```python\nprint(1)\n```\n"
        markdown = answers[0].query_one(".answer", Markdown)
        assert markdown.source == answers[0].answer_text
        assert chat.current_answer is None
        fence = markdown.query_one(MarkdownFence)
        assert fence.lexer == "python"
        highlighted = fence.query_one(Label).render()
        assert isinstance(highlighted, Content) and highlighted.spans, "code is highlighted"


async def test_reasoning_is_shown_then_collapsed_when_the_answer_starts() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        await show_event(chat, ReasoningDelta("Thinking about "))
        await show_event(chat, ReasoningDelta("the tests."))
        block = chat.query_one(AssistantBlock)
        reasoning = block.query_one(".reasoning", Collapsible)
        assert reasoning.display and not reasoning.collapsed
        assert block.reasoning_text == "Thinking about the tests."
        await show_event(chat, MessageDelta("Done."))
        await pilot.pause()
        assert reasoning.collapsed


async def test_hidden_reasoning_is_kept_but_not_displayed() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)):
        chat = app.query_one(ChatView)
        chat.show_reasoning = False
        await show_event(chat, ReasoningDelta("secret thoughts"))
        block = chat.query_one(AssistantBlock)
        assert not block.query_one(".reasoning", Collapsible).display


async def test_a_reply_with_only_tool_calls_leaves_no_empty_answer_block() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        call = command_call("ls")
        await show_event(chat, ToolCallStarted(call))
        await pilot.pause()
        assert not list(chat.query(AssistantBlock))
        assert chat.query_one(ToolCallBlock).status == "running"


async def test_tool_call_block_shows_status_exit_code_and_collapsed_output() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        call = command_call("pytest -q")
        await show_event(chat, ToolCallStarted(call))
        await show_event(chat, ToolOutputDelta(call.id, "collected 4 items\n"))
        block = chat.query_one(ToolCallBlock)
        assert block.output == "collected 4 items\n"
        await show_event(chat, ToolCallFinished(call, "1 failed, 3 passed", True, 1))
        await pilot.pause()
        assert block.status == "error"
        assert block.has_class("-error")
        assert "exit 1" in block.query_one(Collapsible).title
        assert "pytest -q" in block.query_one(Collapsible).title
        assert block.query_one(Collapsible).collapsed
        assert block.output == "1 failed, 3 passed"


async def test_successful_command_is_marked_ok() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)):
        chat = app.query_one(ChatView)
        call = command_call("true")
        await show_event(chat, ToolCallFinished(call, "", False, 0))
        block = chat.query_one(ToolCallBlock)
        assert (block.status, block.status_text) == ("ok", "exit 0")


async def test_rejected_call_is_marked_rejected() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)):
        chat = app.query_one(ChatView)
        call = command_call("rm -rf build")
        await chat.mark_awaiting_approval(call)
        assert chat.query_one(ToolCallBlock).status == "pending"
        result = "rejected by user: not now"
        await show_event(chat, ToolCallFinished(call, result, True, None, {"rejected": True}))
        block = chat.query_one(ToolCallBlock)
        assert block.status == "rejected"
        assert block.output == result


async def test_edit_shows_a_coloured_diff_expanded() -> None:
    diff = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n-print('old')\n+print('new')\n keep\n"
    call = ToolCall("call_9", "edit_file", '{"path": "app.py"}')
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        await show_event(chat, ToolCallFinished(call, "edited app.py", metadata={"diff": diff}))
        await pilot.pause()
        block = chat.query_one(ToolCallBlock)
        view = block.query_one(DiffView)
        assert view.diff == diff
        assert block.status_text == "+1 -1", "the title counts added and removed lines"
        assert not block.query_one(Collapsible).collapsed
        spans = view.render().spans  # type: ignore[union-attr]
        assert spans, "the diff is styled, not plain text"


async def test_interrupted_turn_settles_running_calls() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)):
        chat = app.query_one(ChatView)
        call = command_call("sleep 100")
        await show_event(chat, ToolCallStarted(call))
        await chat.end_turn("cancelled")
        block = chat.query_one(ToolCallBlock)
        assert (block.status, block.status_text) == ("error", "interrupted")
        notices = [n.text for n in chat.query(NoticeBlock)]
        assert notices == [INTERRUPTED_NOTE]


async def test_errors_and_turn_limits_are_reported() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)):
        chat = app.query_one(ChatView)
        await show_event(chat, ErrorEvent("model not found: nope", "model_not_found", fatal=True))
        await show_event(chat, TurnFinished("max_turns"))
        kinds = [(n.kind, n.text) for n in chat.query(NoticeBlock)]
        assert kinds[0][0] == "error"
        assert kinds[0][1].startswith("**The server does not know this model**: model not found")
        assert "/model lists the server's models" in kinds[0][1], "a way forward"
        assert "limit" in kinds[1][1]


async def test_summary_block_shows_replaced_count_and_tokens_saved_once() -> None:
    summary = Message(
        role="user",
        content="The user asked to fix tests; pytest ran 12 times.",
        kind=MessageKind.SUMMARY,
        replaces=("a", "b", "c"),
    )
    plain = Message(role="user", content="hello")
    app = ChatHost()
    async with app.run_test(size=(100, 30)):
        chat = app.query_one(ChatView)
        first = await chat.show_new_summaries(
            [plain, summary], strategy="tool_call", tokens_saved=23_800
        )
        again = await chat.show_new_summaries(
            [plain, summary], strategy="tool_call", tokens_saved=1
        )
        assert again is None
        assert first is not None
        assert first.replaced == 3
        assert "saved 23.8k tokens" in first.title
        assert "replaced 3 messages" in first.title
        assert first.collapsed
        assert len(chat.query(SummaryBlock)) == 1


async def test_chat_keeps_a_bounded_number_of_blocks() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)):
        chat = app.query_one(ChatView)
        for index in range(MAX_CHAT_BLOCKS + 25):
            await chat.add_user_message(f"message {index}")
        blocks = list(chat.query(UserMessageBlock))
        assert len(blocks) == MAX_CHAT_BLOCKS
        assert blocks[0].text == "message 25"
        assert blocks[-1].text == f"message {MAX_CHAT_BLOCKS + 24}"


async def test_history_renders_messages_tool_calls_and_summaries() -> None:
    call = command_call("ls")
    history = [
        Message(role="system", content="system prompt"),
        Message(role="user", content="earlier work", kind=MessageKind.SUMMARY, replaces=("x",)),
        Message(role="user", content="list files"),
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content="a.py\nb.py", tool_call_id=call.id, name=call.name),
        Message(role="assistant", content="Two files."),
    ]
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        await chat.show_history(history)
        await pilot.pause()
        kinds = [type(block).__name__ for block in chat.children]
        assert kinds == ["SummaryBlock", "UserMessageBlock", "ToolCallBlock", "AssistantBlock"]
        assert chat.query_one(ToolCallBlock).output == "a.py\nb.py"
        assert chat.query_one(AssistantBlock).answer_text == "Two files."


async def test_a_finished_answer_marks_its_edge_blocks_once_instead_of_positional_rules() -> None:
    from textual.widgets.markdown import MarkdownBlock

    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        for piece in ("# Title\n\n", "First paragraph.\n\n", "Last paragraph.\n"):
            await show_event(chat, MessageDelta(piece))
        await show_event(chat, AssistantMessageDone(Message(role="assistant", content="x")))
        await pilot.pause()
        markdown = chat.query_one(AssistantBlock).query_one(".answer", Markdown)
        blocks = [child for child in markdown.children if isinstance(child, MarkdownBlock)]
        assert [b.has_class("-first-block") for b in blocks] == [True, False, False]
        assert [b.has_class("-last-block") for b in blocks] == [False, False, True]


def test_no_position_dependent_selectors_in_the_tui_styles() -> None:
    """`:first-child`/`:last-child`/`:nth-child` on a growing container restyle every
    sibling on each mount (a streamed answer then costs the square of its length)."""
    import re
    from pathlib import Path

    import forge.tui

    root = Path(forge.tui.__file__).parent
    selector = re.compile(r"[\w)\]-]:(first-child|last-child|nth-child|first-of-type|last-of-type)")
    offenders = [
        str(path.relative_to(root))
        for path in [*root.rglob("*.tcss"), *root.rglob("*.py")]
        if selector.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


async def test_a_long_diff_is_folded_and_a_short_one_shown() -> None:
    app = ChatHost()
    long_diff = "--- a/x\n+++ b/x\n@@ -1,40 +1,40 @@\n" + "".join(
        f"-old {n}\n+new {n}\n" for n in range(40)
    )
    short_diff = "--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n"
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatView)
        for call_id, diff in (("c1", long_diff), ("c2", short_diff)):
            call = ToolCall(call_id, "apply_diff", '{"path": "x"}')
            await show_event(chat, ToolCallFinished(call, "applied", metadata={"diff": diff}))
        await pilot.pause()
        long_block, short_block = chat.query(ToolCallBlock)
        assert long_block.diff_folded and long_block.query_one(Collapsible).collapsed
        assert "84-line diff folded" in long_block.status_text
        assert long_block.status_text.startswith("+40 -40")
        assert not short_block.diff_folded and not short_block.query_one(Collapsible).collapsed


async def test_the_chat_keeps_following_new_output_after_a_diff_opens_by_itself() -> None:
    diff = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n-print('old')\n+print('new')\n keep\n"
    app = ChatHost()
    async with app.run_test(size=(80, 12)) as pilot:
        chat = app.query_one(ChatView)
        for number in range(6):  # enough to overflow: the chat anchors to the bottom
            await chat.add_notice(f"line {number}")
        await show_event(chat, ReasoningDelta("thinking"))
        await show_event(chat, MessageDelta("The answer starts and the reasoning closes."))
        call = ToolCall("call_9", "edit_file", '{"path": "app.py"}')
        await show_event(chat, ToolCallFinished(call, "edited app.py", metadata={"diff": diff}))
        for number in range(4):
            await chat.add_notice(f"after the edit {number}")
        for _ in range(5):
            await pilot.pause()
        assert chat.is_anchored
        assert chat.scroll_y == chat.max_scroll_y > 0, "still at the newest output"


async def test_a_failed_plan_update_row_says_so_in_words_not_json() -> None:
    plan = [{"step": "Read", "status": "finished"}, {"step": "Fix", "status": "pending"}]
    call = ToolCall("call_p", "update_plan", json.dumps({"plan": plan}))
    app = ChatHost()
    async with app.run_test(size=(100, 30)):
        chat = app.query_one(ChatView)
        await show_event(chat, ToolCallFinished(call, "update_plan: step 1: bad status", True))
        title = str(chat.query_one(ToolCallBlock).query_one(Collapsible).title)
    assert "2 steps (not a valid plan)" in title
    assert "{" not in title and "status" not in title


async def test_a_call_without_arguments_has_no_gap_in_its_row() -> None:
    call = ToolCall("call_n", "tools__picture", "{}")
    app = ChatHost()
    async with app.run_test(size=(100, 30)):
        chat = app.query_one(ChatView)
        await show_event(chat, ToolCallFinished(call, "[image]", False))
        title = str(chat.query_one(ToolCallBlock).query_one(Collapsible).title)
    assert title == "✓ tools__picture  · done"


async def test_a_resumed_tool_row_lines_up_with_the_live_row() -> None:
    # A resumed row is drawn folded (its title line alone) until opened; its title must sit
    # where the live, collapsed row's does, or the resumed chat looks shifted.
    resumed_call = command_call("ls", "call_resumed")
    history = [
        Message(role="user", content="list files"),
        Message(role="assistant", content="", tool_calls=(resumed_call,)),
        Message(role="tool", content="a.py", tool_call_id="call_resumed", name="execute_command"),
    ]
    app = StyledChatHost()
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.query_one(ChatView)
        await chat.show_history(history)
        await show_event(chat, ToolCallFinished(command_call("ls", "call_live"), "a.py", False, 0))
        await pilot.pause()
        rows = [
            "".join(segment.text for segment in strip)
            for strip in app.screen._compositor.render_strips()
        ]
        titles = [row for row in rows if "execute_command" in row]
        assert len(titles) == 2, rows
        assert titles[0].index("▶") == titles[1].index("▶"), titles
