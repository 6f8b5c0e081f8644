"""Snapshots of the main screen mid-summarization, at a fixed terminal size with fixed content.

The scene is driven through the real handlers of the turn worker's messages (each fixed
event's messages handled, awaited, by the regions the dispatcher posts them to), so nothing
depends on time, machine load or a server.
Update after an intended visual change with `pytest tests/tui/test_snapshots_main.py
--snapshot-update` and look at the SVGs. `python -m tests.tui.test_snapshots_main` rewrites
docs/screenshots/main.svg from the first scene.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from forge.agent.events import (
    AgentEvent,
    AssistantMessageDone,
    ContextUsage,
    MessageDelta,
    ReasoningDelta,
    SummarizationCompleted,
    SummarizationProgress,
    SummarizationStarted,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
    Trigger,
    UsageEvent,
)
from forge.config.store import ConfigStore
from forge.llm.messages import Message, MessageKind, ToolCall
from forge.llm.stream import Usage
from forge.session.build import build_session
from forge.tui.app import ForgeApp
from tests.tui.event_delivery import deliver

SIZE = (120, 40)
SnapCompare = Callable[..., bool]

TEST_CALL = ToolCall("call_1", "execute_command", '{"command": "pytest -q tests/test_dates.py"}')
READ_CALL = ToolCall("call_2", "read_file", '{"path": "src/dates.py"}')
EDIT_CALL = ToolCall("call_3", "apply_diff", '{"path": "src/dates.py"}')
RERUN_CALL = ToolCall("call_4", "execute_command", '{"command": "pytest -q"}')
EDIT_DIFF = (
    "--- a/src/dates.py\n+++ b/src/dates.py\n@@ -12,3 +12,5 @@\n"
    " def parse(text: str) -> date:\n"
    "-    return date.fromisoformat(text)\n"
    "+    if WEEK.match(text):\n"
    "+        return date.fromisocalendar(*week_parts(text))\n"
    "+    return date.fromisoformat(text)\n"
)

WORKING_TURN: tuple[AgentEvent, ...] = (
    ReasoningDelta("The parser is in src/dates.py; the failing test names ISO weeks."),
    MessageDelta("I'll run the date tests first to see **what fails**."),
    AssistantMessageDone(Message(role="assistant", content="x", tool_calls=(TEST_CALL,))),
    ToolCallStarted(TEST_CALL),
    ToolCallFinished(TEST_CALL, "F...\n1 failed, 3 passed in 0.12s", True, 1),
    ToolCallFinished(READ_CALL, "1 | from datetime import date\n2 | ..."),
    ToolCallFinished(EDIT_CALL, "applied 1 block to src/dates.py", metadata={"diff": EDIT_DIFF}),
    ToolCallStarted(RERUN_CALL),
    ToolOutputDelta(RERUN_CALL.id, "....\n"),
    UsageEvent(Usage(110_400, 900, 111_300), 48_200, 3_100),
)
TOOL_CALL_RUN: tuple[AgentEvent, ...] = (
    ContextUsage(110_400, 128_000),
    SummarizationStarted("run-1", "tool_call", Trigger.AUTO, "gpt-4.1-mini", 110_400, 128_000, 12),
    *(SummarizationProgress("run-1", "tool_call", done, 12) for done in range(1, 8)),
)


def make_scene_app(home: Path, monkeypatch: pytest.MonkeyPatch | None = None) -> ForgeApp:
    """The app on ~/projects/dates with fixed models, talking to nothing."""
    settings_env = {
        "OPENAI_API_KEY": "sk-snapshot-not-a-real-key",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "FORGE_LLM__MODEL": "gpt-4.1",
        "FORGE_LLM__SUMMARIZATION_MODEL": "gpt-4.1-mini",
    }
    for name, value in settings_env.items():
        if monkeypatch is not None:
            monkeypatch.setenv(name, value)
        else:
            import os

            os.environ[name] = value
    workspace = home / "projects" / "dates"
    workspace.mkdir(parents=True, exist_ok=True)
    store = ConfigStore()
    session = build_session(store.current.settings, workspace)
    return ForgeApp(session=session, store=store, workspace=workspace)


async def start_up_done(pilot: Pilot[object]) -> None:
    """Wait until the session is ready and start-up's own gauge update (the tokenizer's count,
    off the loop) has landed: the scene's events must come after it, not race it."""
    app = pilot.app
    assert isinstance(app, ForgeApp)
    await app.session_ready.wait()
    seen = False
    for _ in range(300):  # the worker starts after a refresh and is dropped once it ends
        await pilot.pause()
        running = any(worker.group == "context-count" for worker in app.workers)
        if running:
            seen = True
        elif seen:
            return


async def play(pilot: Pilot[object], events: tuple[AgentEvent, ...]) -> None:
    """Hand each event to the app's handler, as the turn worker's messages are, awaiting each
    (posting and pausing would depend on how busy the machine is), then let the chat settle."""
    app = pilot.app
    assert isinstance(app, ForgeApp)
    for event in events:
        await deliver(app, event)
    await settle_chat(pilot)


async def working_scene(pilot: Pilot[object]) -> None:
    """A turn in progress: tool calls, a diff, and a tool-call summarization at 7/12."""
    app = pilot.app
    assert isinstance(app, ForgeApp)
    await start_up_done(pilot)
    app.prompt.cursor_blink = False
    await app.chat.add_user_message("Make the date parser accept ISO weeks and fix the tests")
    app.busy = True
    app.status.show_activity("working…")
    await play(pilot, WORKING_TURN + TOOL_CALL_RUN)


async def settle_chat(pilot: Pilot[object]) -> None:
    """Wait until the chat's height has stopped changing and, once it overflows, it sits at
    the bottom: markdown blocks render in stages, and a screenshot taken between a growth and
    the anchored scroll that follows it is two lines off."""
    app = pilot.app
    assert isinstance(app, ForgeApp)
    chat = app.chat
    previous = None
    for _ in range(100):
        await pilot.pause()
        state = (chat.virtual_size.height, chat.scroll_y, chat.max_scroll_y)
        at_bottom = not chat.is_anchored or chat.scroll_y == chat.max_scroll_y
        if state == previous and at_bottom:
            return
        previous = state


async def compact_scene(pilot: Pilot[object]) -> None:
    """After a finished run (its summary in the chat), a /compact run at 1/3, context
    critical."""
    await working_scene(pilot)
    app = pilot.app
    assert isinstance(app, ForgeApp)
    summary = Message(
        role="assistant",
        content="[Summary of my earlier tool calls]\nRan the date tests (1 failed: ISO weeks); "
        "read src/dates.py; added week parsing.",
        kind=MessageKind.SUMMARY,
        replaces=tuple(f"m{n}" for n in range(12)),
    )
    app.session.agent.conversation.append(summary)
    await play(
        pilot,
        (
            SummarizationCompleted(
                "run-1", "tool_call", "gpt-4.1-mini", 12, 110_400, 64_900, 3.2, 12
            ),
        ),
    )
    await app.chat.add_notice("Compacting the conversation with instructions: keep API choices…")
    await play(
        pilot,
        (
            SummarizationStarted(
                "run-2", "threshold", Trigger.MANUAL, "gpt-4.1-mini", 119_800, 128_000, 3
            ),
            SummarizationProgress("run-2", "threshold", 1, 3),
        ),
    )


def test_main_screen_mid_summarization(
    snap_compare: SnapCompare, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Header, chat with a diff, status pane with the gauge and "Summarizing 7/12"."""
    app = make_scene_app(isolated_environment, monkeypatch)
    assert snap_compare(app, terminal_size=SIZE, run_before=working_scene)


def test_main_screen_compacting_after_a_summary(
    snap_compare: SnapCompare, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A finished run's summary block in the chat, /compact at 1/3, the gauge critical."""
    app = make_scene_app(isolated_environment, monkeypatch)
    assert snap_compare(app, terminal_size=SIZE, run_before=compact_scene)


async def _write_docs_screenshot(destination: Path) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        import os

        home = Path(temporary)
        for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            os.environ[variable] = str(home / variable.lower())
        os.environ["HOME"] = str(home)
        app = make_scene_app(home)
        async with app.run_test(size=SIZE) as pilot:
            await working_scene(pilot)
            await pilot.pause()
            app.save_screenshot(filename=destination.name, path=str(destination.parent))


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/screenshots/main.svg")
    asyncio.run(_write_docs_screenshot(target))
    print(f"wrote {target}")
