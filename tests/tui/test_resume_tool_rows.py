"""A reopened session draws each tool row as the live chat left it (issue 35's tryout at 80 by 24,
docs/adr/0048 addendum): the same session is run live and reopened with `--continue`, and each
row's lines on the screen are compared — an edit's row open on its diff (`write_file`,
`apply_diff`; a long diff folded with the same note), a command with output, a call refused by
read-only mode, one the user rejected, a `web_fetch`, and a `task` child stopped from its
approval dialog (one title line, no empty line under it) — closed, and opened."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Size
from textual.pilot import Pilot
from textual.widgets import Collapsible

from forge.agent.modes import PermissionMode
from forge.llm.messages import ToolCall
from forge.tui.app import ForgeApp
from forge.tui.screens.approval import ApprovalScreen
from forge.tui.widgets.chat_blocks import ToolCallBlock
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.support.web_server import WebServer
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until
from tests.tui.test_resume_fidelity import set_mode

SIZE = (80, 24)
PARENT, CHILD = "gpt-4o", "gpt-4o-mini"
LONG_FILE = "".join(f"line {n}\n" for n in range(40))


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        yield server


async def row_lines(pilot: Pilot[Any], app: ForgeApp, block: ToolCallBlock) -> list[str]:
    """The screen lines `block` covers, with the block scrolled to the chat's top."""
    app.chat.scroll_to_widget(block, animate=False, top=True)
    await pilot.pause()
    region = block.region.intersection(app.chat.region)
    strips = app.screen._compositor.render_strips()
    return [
        strips[y].text[region.x : region.right].rstrip() for y in range(region.y, region.bottom)
    ]


async def tool_rows(pilot: Pilot[Any], app: ForgeApp) -> list[list[str]]:
    return [await row_lines(pilot, app, block) for block in app.chat.query(ToolCallBlock)]


async def opened_rows(pilot: Pilot[Any], app: ForgeApp) -> list[list[str]]:
    """`tool_rows` with every row opened, as a click on its title opens it."""
    for block in app.chat.query(ToolCallBlock):
        block.action_unfold()  # a resumed row's first click
    await pilot.pause()
    for box in app.chat.query(Collapsible):
        box.collapsed = False
    await pilot.pause()
    return await tool_rows(pilot, app)


def write_agent(workspace: Path) -> None:
    folder = workspace / ".forge" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.md").write_text(
        f"---\nname: reviewer\ndescription: reviews\nmodel: {CHILD}\n---\nReview.\n"
    )


async def test_tool_rows_reopen_as_the_live_chat_drew_them(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, web: WebServer
) -> None:
    write_agent(workspace)
    (workspace / "a.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    web.page("/guide", "<html><body><h1>Guide</h1><p>Run the tests first.</p></body></html>")
    edit = {"path": "a.py", "blocks": [{"search": "y = 2", "replace": "y = 3"}]}
    llm_server.enqueue_for(
        PARENT,
        ToolCalls([Call("write_file", {"path": "out.txt", "content": "one\ntwo\n"})]),
        ToolCalls([Call("apply_diff", edit)]),
        ToolCalls([Call("write_file", {"path": "long.txt", "content": LONG_FILE})]),
        ToolCalls([Call("execute_command", {"command": "printf 'alpha\\nbeta\\n'"})]),
        ToolCalls([Call("web_fetch", {"url": web.url("/guide")})]),
        Text("Done."),
        # read-only mode refuses the write without asking
        ToolCalls([Call("write_file", {"path": "no.txt", "content": "x\n"})]),
        Text("Refused."),
        # the user rejects a command
        ToolCalls([Call("execute_command", {"command": "rm -rf build"})]),
        Text("Left alone."),
        # a child stopped from its approval dialog (Esc)
        ToolCalls([Call("task", {"agent": "reviewer", "prompt": "write child.txt please"})]),
    )
    llm_server.enqueue_for(
        CHILD, ToolCalls([Call("execute_command", {"command": "touch child.txt"})])
    )
    config = {
        "llm": {"model": PARENT},
        "tools": {
            "command_allowlist": ["printf"],
            "auto_approve": ["write_file", "apply_diff", "read_file"],
            "web_fetch": {"allow_private": True, "allow_domains": ["127.0.0.1"]},
        },
    }
    store = configure(llm_server, monkeypatch, config=config)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "do the work")
        await wait_idle(pilot)
        await set_mode(pilot, app, PermissionMode.READ_ONLY)
        await submit(pilot, "write no.txt")
        await wait_idle(pilot)
        await set_mode(pilot, app, PermissionMode.ASK)
        await submit(pilot, "clean the build")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval")
        await pilot.press("n")
        await pilot.pause()
        await pilot.press(*"not now", "enter")
        await wait_idle(pilot)
        await submit(pilot, "have the reviewer write")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        await pilot.press("escape")
        await wait_idle(pilot)
        live = await tool_rows(pilot, app)
        live_opened = await opened_rows(pilot, app)

    # What the live chat drew, so that the comparison compares the right things.
    titles = [lines[0] for lines in live]
    assert [title.split()[3] for title in titles] == [
        "write_file",
        "apply_diff",
        "write_file",
        "execute_command",
        "web_fetch",
        "write_file",
        "execute_command",
        "task",
    ]
    assert titles[0] == "▌ ▼ ✓ write_file  out.txt  · +2 -0"  # open on its diff
    assert "+two" in "\n".join(live[0]) and "-y = 2" in "\n".join(live[1])
    assert titles[2].startswith("▌ ▶ ✓ write_file  long.txt  · +40 -0 · 44-line diff")
    assert titles[3].startswith("▌ ▶ ✓ execute_command") and len(live[3]) == 1
    assert "refused (read-only mode)" in titles[5]
    assert live[6][-1] == "▌ user: not now"  # the reason wraps rather than being cut
    assert len(live[7]) == 1 and live[7][0].startswith("▌ ▶ ✗ task  reviewer: write child")
    assert live[7][0].endswith("· interrupted")

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: resumed.chat.children, "the history")
        await pilot.pause()
        while resumed.chat.older_rows:
            await resumed.chat.load_older_rows()
        await pilot.pause()
        shown = await tool_rows(pilot, resumed)
        shown_opened = await opened_rows(pilot, resumed)
    assert shown == live
    # Opened, each row shows what the live one held: the command's output, the page fetched.
    assert shown_opened == live_opened
    assert live_opened[3][2:] == ["▌   alpha", "▌   beta", "▌   [exit code 0]"]
    assert "/guide (text/html)" in live_opened[4][2]
    assert live[4][0].startswith("▌ ▶ ✓ web_fetch  http://127.0.0.1:")


def test_a_folded_rows_height_is_its_titles_at_the_width_it_is_laid_out_at() -> None:
    """A resumed `task` row had an empty line under it at 80 by 24: its height was taken from its
    whole title (its argument not yet shortened, as no Resize had come), and no layout came
    after the Resize that shortened it. The height now follows the width being laid out."""
    prompt = "write child.txt please, then report what you found in it"
    call = ToolCall("call_1", "task", json.dumps({"agent": "reviewer", "prompt": prompt}))
    block = ToolCallBlock.recorded(call, "error", "interrupted", "[interrupted by the user]")
    width = 51  # the chat's column at 80 by 24 beside the status pane, less the row's edge
    assert len(f"▶ ✗ task  reviewer: {prompt}  · interrupted") > width
    assert block.get_content_height(Size(56, 20), Size(56, 20), width) == 1
