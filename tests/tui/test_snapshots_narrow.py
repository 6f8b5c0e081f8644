"""The main screen at 80x24 (issue 18): /cost as one block per model, tool rows that keep their
status, a placeholder that is not cut mid-phrase, and Forge's notices and errors marked apart
from the user's messages.

Each test asserts the property itself as well as the picture, so a regression fails with a
reason. Update after an intended visual change with
`pytest tests/tui/test_snapshots_narrow.py --snapshot-update` and look at the SVGs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets._collapsible import CollapsibleTitle

from forge.agent.events import ErrorEvent, ToolCallFinished
from forge.llm.messages import Message, MessageKind, ToolCall
from forge.llm.stream import Usage
from forge.tui.app import ForgeApp
from forge.tui.widgets.chat_blocks import (
    NoticeBlock,
    SummaryBlock,
    ToolCallBlock,
    UserMessageBlock,
)
from forge.tui.widgets.cost_notice import CostNotice
from forge.tui.widgets.prompt_input import PLACEHOLDERS
from tests.tui.test_app_helpers import submit, wait_until
from tests.tui.test_snapshots_main import make_scene_app, play, settle_chat

SIZE = (80, 24)
SnapCompare = Callable[..., bool]

REJECTED = ToolCall(
    "call_1",
    "write_file",
    '{"path": "src/settings/loader/environment_overrides.py", "content": "x"}',
)
REFUSED = ToolCall(
    "call_2", "execute_command", '{"command": "rm -rf build && python -m pytest -q tests/"}'
)
LONG_COMMAND = ToolCall(
    "call_3",
    "execute_command",
    '{"command": "python -m pytest -q tests/tui/test_snapshots_narrow.py -k placeholder"}',
)
NARROW_ROWS = (
    ToolCallFinished(
        REJECTED,
        "rejected by user: write the tests first, then change the loader so that the "
        "environment wins over the file",
        True,
        metadata={"rejected": True},
    ),
    ToolCallFinished(
        REFUSED,
        "read-only mode: running commands is not allowed",
        True,
        metadata={"refused": True},
    ),
    ToolCallFinished(LONG_COMMAND, "1 passed in 0.31s", False, 0),
)


async def _start(pilot: Pilot[object]) -> ForgeApp:
    app = pilot.app
    assert isinstance(app, ForgeApp)
    app.prompt.cursor_blink = False
    await pilot.pause()
    return app


def _title(block: ToolCallBlock | SummaryBlock) -> CollapsibleTitle:
    return block.query_one(CollapsibleTitle)


def _inside(app: ForgeApp, title: CollapsibleTitle) -> bool:
    """The title lies within the chat's width (a title wider than its row is cut off)."""
    chat = app.chat.scrollable_content_region
    return title.region.x >= chat.x and title.region.right <= chat.right


async def tool_rows_scene(pilot: Pilot[object]) -> None:
    """A rejected write with its reason, a refused command, a long command that passed and a
    summary, at 80 columns: every status is whole and every title inside the chat."""
    app = await _start(pilot)
    await app.chat.add_user_message("Tidy the settings loader")
    await play(pilot, NARROW_ROWS)
    summary = Message(
        role="assistant",
        content="[Summary]\nRead the loader and its tests.",
        kind=MessageKind.SUMMARY,
        replaces=tuple(f"m{n}" for n in range(6)),
    )
    await app.chat.show_new_summaries([summary], strategy="threshold", tokens_saved=12_345)
    await settle_chat(pilot)
    blocks = list(app.chat.query(ToolCallBlock))
    statuses = [
        "· rejected by user: write the tests first, then change the loader so that the "
        "environment wins over the file",
        "· refused (read-only mode)",
        "· exit 0",
    ]
    for block, status in zip(blocks, statuses, strict=True):
        title = _title(block)
        assert str(title.label).endswith(status), title.label
        assert _inside(app, title), f"{block.call.name}'s title is cut off"
        assert "…" in str(title.label), "the long argument is shortened"
    (summary_block,) = app.chat.query(SummaryBlock)
    assert "saved 12.3k tokens" in str(_title(summary_block).label)
    assert _inside(app, _title(summary_block)), "the summary's title is cut off"


def test_tool_rows_at_80x24_keep_their_status(
    snap_compare: SnapCompare, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_scene_app(isolated_environment, monkeypatch)
    assert snap_compare(app, terminal_size=SIZE, run_before=tool_rows_scene)


def _record_costs(app: ForgeApp) -> None:
    """Usage as the server would have reported it: the agent model (priced), a local model
    (no price) and the summarization model, and a compaction between requests."""
    from forge.agent.events import SummarizationCompleted

    costs = app.session.agent.costs
    costs.record_agent("gpt-4.1", Usage(20_000, 700, 20_700, cached_tokens=1_000))
    costs.observe(
        SummarizationCompleted("run-1", "threshold", "gpt-4.1-mini", 6, 30_000, 17_350, 2.0, 1)
    )
    costs.record_agent("gpt-4.1", Usage(3_193, 200, 3_393))
    costs.record_agent("qwen2.5-coder-local", Usage(3_000, 900, 3_900))
    costs.record_summary("gpt-4.1-mini", Usage(12_000, 900, 12_900))
    app.status.refresh_session_lines()


async def cost_scene(pilot: Pilot[object]) -> None:
    """/cost at 80 columns: one block per model, scrolled to its top."""
    app = await _start(pilot)
    _record_costs(app)
    await submit(pilot, "/cost")
    await settle_chat(pilot)
    notice = app.chat.query_one(CostNotice)
    assert notice.text == notice.details.narrow, "too narrow for the table"
    assert "| kind |" not in notice.text
    for model in ("gpt-4.1", "qwen2.5-coder-local", "gpt-4.1-mini"):
        assert f"`{model}`:" in notice.text
    app.chat.scroll_to_widget(notice, top=True, animate=False)
    await pilot.pause()
    await pilot.pause()


def test_cost_at_80x24_shows_one_block_per_model(
    snap_compare: SnapCompare, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_scene_app(isolated_environment, monkeypatch)
    assert snap_compare(app, terminal_size=SIZE, run_before=cost_scene)


async def test_cost_switches_between_table_and_blocks_as_the_terminal_resizes(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_scene_app(isolated_environment, monkeypatch)
    async with app.run_test(size=(160, 40)) as pilot:
        _record_costs(app)
        await submit(pilot, "/cost")
        notice = app.chat.query_one(CostNotice)
        assert notice.text == notice.details.wide and "| kind |" in notice.text
        await pilot.resize_terminal(*SIZE)
        await wait_until(pilot, lambda: notice.text == notice.details.narrow, "the blocks")
        await pilot.resize_terminal(160, 40)
        await wait_until(pilot, lambda: notice.text == notice.details.wide, "the table")


async def markers_scene(pilot: Pilot[object]) -> None:
    """The user's message, an error and a notice: three different markers."""
    app = await _start(pilot)
    await app.chat.add_user_message("explain @nonexist.py")
    await app.chat.add_notice(
        "@nonexist.py not attached: no such file in the workspace", kind="error"
    )
    await play(pilot, (ErrorEvent("Incorrect API key provided: sk-…0000", "authentication"),))
    await app.chat.add_notice("Mode: read-only (nothing is written or run)")
    await settle_chat(pilot)
    (user,) = app.chat.query(UserMessageBlock)
    error, server_error, info = list(app.chat.query(NoticeBlock))[-3:]
    user_edge = user.styles.border_left[0]
    assert error.kind == server_error.kind == "error" and info.kind == "info"
    assert user_edge == "thick"
    assert error.styles.border_left[0] == server_error.styles.border_left[0] == "heavy"
    assert info.styles.border_left[0] == "vkey"


def test_notices_and_errors_are_marked_apart_from_the_users_messages(
    snap_compare: SnapCompare, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_scene_app(isolated_environment, monkeypatch)
    assert snap_compare(app, terminal_size=SIZE, run_before=markers_scene)


async def placeholder_scene(pilot: Pilot[object]) -> None:
    """The empty prompt at 80 columns: a placeholder that fits whole."""
    app = await _start(pilot)
    prompt = app.prompt
    assert prompt.placeholder != PLACEHOLDERS[0], "the long one is cut at 80 columns"
    assert len(prompt.placeholder) < prompt.scrollable_content_region.width
    assert prompt.placeholder.endswith(")"), "a whole phrase, with its hints"


def test_placeholder_at_80x24_is_a_shorter_whole_one(
    snap_compare: SnapCompare, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_scene_app(isolated_environment, monkeypatch)
    assert snap_compare(app, terminal_size=SIZE, run_before=placeholder_scene)
