"""The plan in the status pane: live from the model's update_plan calls (real app, loopback
server), back after a resume, never shown as a user message; compact for long plans; and
snapshots at 80x24 and at the app's usual size (docs/adr/0028)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.content import Content
from textual.pilot import Pilot

from forge.agent.events import ToolCallFinished, ToolCallStarted
from forge.agent.tools.base import ToolContext
from forge.agent.tools.update_plan import UpdatePlanTool
from forge.context.plan import PLAN_TOOL, PlanStatus, parse_plan
from forge.llm.messages import ToolCall
from forge.tui.app import ForgeApp
from forge.tui.widgets.chat_blocks import UserMessageBlock
from forge.tui.widgets.plan_view import PlanView, visible_lines
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle
from tests.tui.test_snapshots_main import make_scene_app, play, working_scene

SnapCompare = Callable[..., bool]

FIRST = [
    {"step": "Read the date parser", "status": "in_progress"},
    {"step": "Add ISO week parsing", "status": "pending"},
]
SECOND = [
    {"step": "Read the date parser", "status": "done"},
    {"step": "Add ISO week parsing", "status": "in_progress"},
    {"step": "Run the tests", "status": "pending"},
]
LONG = [
    {"step": "Reproduce the failing ISO week test", "status": "done"},
    {"step": "Read src/dates.py", "status": "done"},
    {"step": "Find where weeks are parsed", "status": "done"},
    {"step": "Add week parsing to parse_date", "status": "in_progress"},
    {"step": "Handle week 53", "status": "pending"},
    {"step": "Update the tests", "status": "pending"},
    {"step": "Run the whole suite", "status": "pending"},
    {"step": "Update the changelog", "status": "pending"},
]


def shown(view: PlanView) -> list[str]:
    """The lines the view renders, as plain text."""
    rendered = view.render()
    assert isinstance(rendered, Content)
    return rendered.plain.splitlines()


def test_a_short_plan_shows_every_step() -> None:
    plan = parse_plan(SECOND)
    assert visible_lines(plan, 4) == [(item.step, item.status) for item in plan]


def test_a_long_plan_shows_a_window_around_the_step_in_progress() -> None:
    plan = parse_plan(LONG)
    lines = visible_lines(plan, 4)
    assert lines == [
        ("✓ 2 done", None),
        ("Find where weeks are parsed", PlanStatus.DONE),
        ("Add week parsing to parse_date", PlanStatus.IN_PROGRESS),
        ("… 4 more", None),
    ]
    assert len(visible_lines(plan, 6)) == 6
    finished = parse_plan([{**step, "status": "done"} for step in LONG])
    assert visible_lines(finished, 4)[0] == ("✓ 5 done", None)
    assert visible_lines(finished, 4)[-1] == ("Update the changelog", PlanStatus.DONE)


async def test_the_status_pane_shows_the_plan_live_and_after_a_resume(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call(PLAN_TOOL, {"plan": FIRST})]),
        ToolCalls([Call(PLAN_TOOL, {"plan": SECOND})]),
        Text("Planned."),
    )
    store = configure(llm_server, monkeypatch)
    app = make_app(store, workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.status.query_one(PlanView)
        assert not view.display or view.has_class("-empty")
        assert view.region.height == 0, "no plan, no room taken"
        await submit(pilot, "add ISO weeks")
        await wait_idle(pilot)
        assert view.plan == parse_plan(SECOND)
        assert view.region.height == 4
        assert shown(view) == [
            "Plan 1/3 done",
            "✓ Read the date parser",
            "▸ Add ISO week parsing",
            "○ Run the tests",
        ]
    assert llm_server.pending == 0

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        view = resumed.status.query_one(PlanView)
        assert view.plan == parse_plan(SECOND)
        assert shown(view)[0] == "Plan 1/3 done"
        users = [block.text for block in resumed.chat.query(UserMessageBlock)]
        assert users == ["add ISO weeks"], "the pinned plan is not a user message"


async def _plan_scene(pilot: Pilot[object]) -> None:
    """The working scene with an eight-step plan, three done and one in progress."""
    await working_scene(pilot)
    app = pilot.app
    assert isinstance(app, ForgeApp)
    call = ToolCall("call_plan", PLAN_TOOL, json.dumps({"plan": LONG}))
    tool = UpdatePlanTool()
    result = await tool.run(tool.parse_arguments({"plan": LONG}), ToolContext(Path(".")))
    await play(
        pilot,
        (
            ToolCallStarted(call),
            ToolCallFinished(call, result.content, metadata=result.metadata),
        ),
    )
    await asyncio.sleep(0)


def test_snapshot_plan_in_the_status_pane_at_80x24(
    snap_compare: SnapCompare, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_scene_app(isolated_environment, monkeypatch)

    async def scene(pilot: Pilot[object]) -> None:
        await _plan_scene(pilot)
        view = pilot.app.query_one(PlanView)
        assert view.region.height == 5, "the title and a four-line window"
        assert view.region.bottom <= 24
        assert shown(view)[2] == "✓ Find where weeks …"
        # Under the plan, a running summarization's progress line still shows: at 24 rows
        # the cost keeps its total only (/cost has the split).
        progress = pilot.app.query_one("#summary-progress-label")
        assert "Summarizing 7/12" in str(progress.render())
        assert progress.region.height == 1 and progress.region.bottom <= 24 - 1  # the footer

    assert snap_compare(app, terminal_size=(80, 24), run_before=scene)


def test_snapshot_plan_in_the_status_pane(
    snap_compare: SnapCompare, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_scene_app(isolated_environment, monkeypatch)

    async def scene(pilot: Pilot[object]) -> None:
        await _plan_scene(pilot)
        view = pilot.app.query_one(PlanView)
        assert view.region.height == 9, "every step of eight, and the title"
        assert "○ Update the changelog" in shown(view)

    assert snap_compare(app, terminal_size=(120, 40), run_before=scene)
