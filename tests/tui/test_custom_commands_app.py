"""Custom slash commands in the real app: expansion sent to the loopback server, a turn-scoped
model, namespaces, completion, help, the palette and reported problems."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import OptionList

from forge.tui.command_table import set_custom_commands
from forge.tui.screens.help import HelpScreen, help_markdown
from forge.tui.widgets.chat_blocks import ExpansionBlock, NoticeBlock, UserMessageBlock
from forge.tui.widgets.prompt_input import CommandHints
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_idle, wait_until

SIZE = (120, 40)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _forget_custom_commands() -> object:
    yield
    set_custom_commands(())


@pytest.fixture
def commands(workspace: Path) -> Path:
    project = workspace / ".forge" / "commands"
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "forge" / "commands"
    write(
        project / "git" / "review.md",
        "---\ndescription: Review a branch\nmodel: review-model\n---\n"
        "Review branch $1 against $2. Notes: $ARGUMENTS\n",
    )
    write(user / "explain.md", "---\ndescription: Explain some code\n---\nExplain $ARGUMENTS\n")
    write(user / "review-all.md", "user version")
    write(project / "review-all.md", "Review everything.")
    write(project / "help.md", "not the real help")
    write(project / "broken.md", "---\ndescription: [oops\n---\nbody")
    return project


async def test_custom_command_sends_expanded_text_on_its_model_for_one_turn(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, commands: Path
) -> None:
    llm_server.enqueue(Text("Reviewed."))
    llm_server.enqueue(Text("Explained."))
    llm_server.enqueue(Text("All reviewed."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    session_model = app.settings.llm.model
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, '/git:review "feature x" main')
        await wait_idle(pilot)
        await submit(pilot, "/explain the parser")
        await wait_idle(pilot)
        await submit(pilot, "/review-all")
        await wait_idle(pilot)
        shown = [block.text for block in app.chat.query(UserMessageBlock)]
        folded = [block.text for block in app.chat.query(ExpansionBlock)]
        problems = [b.text for b in app.chat.query(NoticeBlock) if b.kind == "error"]
        told = notices(app)
    sent = [request.messages[-1]["content"] for request in llm_server.requests]
    assert sent == [
        'Review branch feature x against main. Notes: "feature x" main',
        "Explain the parser",
        "Review everything.",  # the project's file wins over the user's
    ]
    # The chat shows what was typed, what it sent folded under it (issue 35, ADR 0048).
    assert shown == ['/git:review "feature x" main', "/explain the parser", "/review-all"]
    assert folded == sent
    assert [request.model for request in llm_server.requests] == [
        "review-model",
        session_model,  # the command's model was for its turn only
        session_model,
    ]
    assert app.session.agent.provider.model == session_model
    assert any("`/git:review` runs this turn on `review-model`" in n for n in told)
    assert len(problems) == 1
    assert str(commands / "help.md") in problems[0] and "built-in" in problems[0]
    assert str(commands / "broken.md") in problems[0] and "malformed" in problems[0]


async def test_builtin_wins_and_custom_commands_are_listed(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, commands: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session_ready.is_set(), "start-up")
        # Completion: the hints and Tab.
        app.prompt.focus()
        await pilot.press("/", "g")
        hints = app.query_one(CommandHints)
        await wait_until(pilot, lambda: "git:review" in str(hints.render()), "the hint")
        assert "Review a branch" in str(hints.render())
        await pilot.press("tab")
        assert app.prompt.text == "/git:review "
        app.prompt.clear()
        # Help lists them with their description; /help is still the built-in.
        await submit(pilot, "/help")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        await pilot.press("escape")
        text = help_markdown()
        assert "Explain some code (user)" in text and "/git:review" in text
        # The palette lists them too.
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"explain")

        def listed() -> bool:
            options = app.screen.query_one(OptionList)
            return any(
                "explain" in str(options.get_option_at_index(i).prompt)
                for i in range(options.option_count)
            )

        await wait_until(pilot, listed, "the palette to list /explain")
        await pilot.press("escape")
    assert llm_server.requests == []


async def test_clear_rereads_the_command_files(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("Done."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/later now")
        assert any("Unknown command /later" in n for n in notices(app))
        write(workspace / ".forge" / "commands" / "later.md", "Added later: $ARGUMENTS")
        await submit(pilot, "/clear")
        await submit(pilot, "/later now")
        await wait_idle(pilot)
    assert [r.messages[-1]["content"] for r in llm_server.requests] == ["Added later: now"]


async def test_a_command_file_added_while_forge_runs_is_found_when_first_used(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("Explained."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        write(
            workspace / ".forge" / "commands" / "x.md",
            "---\nmodel: x-model\n---\nExplain $ARGUMENTS briefly.\n",
        )
        await submit(pilot, "/x notes")
        await wait_idle(pilot)
        assert not any("Unknown command" in text for text in notices(app))
    assert [r.model for r in llm_server.requests] == ["x-model"]
    assert "Explain notes briefly." in llm_server.requests[0].text()
