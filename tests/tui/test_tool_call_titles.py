"""What a tool row's title says about its call: the telling argument, never raw JSON for
Forge's own tools (`task`'s agent and prompt, `skill`'s name)."""

from __future__ import annotations

import json

from forge.llm.messages import ToolCall
from forge.tui.widgets.formatting import tool_call_argument_summary


def _call(tool: str, **arguments: object) -> ToolCall:
    return ToolCall(id="c1", name=tool, arguments=json.dumps(arguments))


def test_a_task_row_names_the_agent_then_its_prompt() -> None:
    call = _call("task", agent="explore", prompt="Find where   f is defined")
    assert tool_call_argument_summary(call) == "explore: Find where f is defined"
    assert tool_call_argument_summary(call, width=12) == "explore: Fi…"


def test_a_skill_row_names_the_skill() -> None:
    assert tool_call_argument_summary(_call("skill", name="release-notes")) == "release-notes"


def test_a_path_still_wins_and_an_unknown_shape_is_shown_as_json() -> None:
    assert tool_call_argument_summary(_call("read_file", path="a.txt", name="n")) == "a.txt"
    assert tool_call_argument_summary(_call("mcp__x__y", count=3)) == '{"count": 3}'


def test_a_web_fetch_row_names_the_url_not_the_json() -> None:
    call = _call("web_fetch", url="https://example.com/guide", prompt="how do I migrate?")
    assert tool_call_argument_summary(call) == "https://example.com/guide"
