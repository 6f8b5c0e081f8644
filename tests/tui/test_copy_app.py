"""/copy in the real app at 80x24 (issue 35): what it copies (the last answer, its N-th code
block, as the terminal's clipboard receives it through OSC 52) and what it says when there is
nothing to copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_idle

SIZE = (80, 24)


async def test_copy_says_when_there_is_nothing_and_copies_a_code_block(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("Run this:\n\n```sh\nmake test\n```\n"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/copy")
        assert notices(app)[-1] == "Nothing to copy yet: no answer in this session."
        await submit(pilot, "how do I test")
        await wait_idle(pilot)
        await submit(pilot, "/copy 2")
        assert notices(app)[-1] == "The last answer has only 1 code block."
        await submit(pilot, "/copy x")
        assert "give a code block's number" in notices(app)[-1]
        await submit(pilot, "/copy 1")
        assert app.clipboard == "make test"
        assert any("Copied code block 1 of 1 (sh)" in n.message for n in app._notifications)
