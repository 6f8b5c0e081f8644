"""Skills in the real app against the loopback server: `/name args` sends the skill's text,
the clash order builtin > custom > skill (each said once), completion lists skills, problems
are told at start naming the file, and `/skills` lists them and enables/disables one in the
user config."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from textual.widgets import SelectionList, Static

from forge.tui.app import ForgeApp
from forge.tui.command_table import all_commands, set_custom_commands, set_skill_commands
from forge.tui.screens.skills import SkillsScreen
from forge.tui.widgets.chat_blocks import NoticeBlock
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import (
    configure,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill(root: Path, name: str, description: str, body: str, extra: str = "") -> Path:
    return write(
        root / name / "SKILL.md",
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}",
    )


def saved_disabled(path: Path) -> object:
    """`skills.disabled` as the user config file holds it."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))["skills"]["disabled"]


@pytest.fixture(autouse=True)
def _forget_commands() -> object:
    yield
    set_custom_commands(())
    set_skill_commands(())


@pytest.fixture
def skills(workspace: Path) -> Path:
    root = workspace / ".claude" / "skills"
    skill(root, "review", "Review a file.", "Review $1 using ${SKILL_DIR}/checklist.md\n")
    skill(root, "help", "Clashes with /help.", "not the help\n")
    skill(root, "explain", "Clashes with a custom command.", "the skill's explain\n")
    skill(root, "hidden", "Model only.", "hidden body\n", extra="user-invocable: false\n")
    write(root / "Broken" / "SKILL.md", "---\nname: Broken\ndescription: x\n---\nbody\n")
    write(workspace / ".forge" / "commands" / "explain.md", "the custom explain $ARGUMENTS")
    return root


async def test_a_skill_runs_as_name_args_and_commands_win_clashes(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, skills: Path
) -> None:
    llm_server.enqueue(Text("Reviewed."), Text("Explained."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_idle(pilot, "start")
        names = [command.name for command in all_commands()]
        await submit(pilot, "/review src/a.py")
        await wait_idle(pilot)
        await submit(pilot, "/explain x")
        await wait_idle(pilot)
        await submit(pilot, "/hidden")
        await wait_idle(pilot)
        problems = [b.text for b in app.chat.query(NoticeBlock) if b.kind == "error"]
        told = notices(app)
    sent = [request.messages[-1]["content"] for request in llm_server.requests]
    assert f"Review src/a.py using {skills / 'review'}/checklist.md" in sent[0]
    assert sent[1] == "the custom explain x"
    assert len(sent) == 2  # /hidden is not a user command
    assert any("The skill `hidden` is for the model only" in text for text in told)
    assert "review" in names and names.count("help") == 1 and names.count("explain") == 1
    assert "hidden" not in names
    skill_problems = [text for text in problems if text.startswith("Skills:")]
    assert len(skill_problems) == 1  # said once
    assert str(skills / "help" / "SKILL.md") in skill_problems[0]
    assert "built-in" in skill_problems[0] and "custom command wins" in skill_problems[0]
    assert str(skills / "Broken" / "SKILL.md") in skill_problems[0]
    assert "lower-case" in skill_problems[0]
    assert "- review: Review a file." in llm_server.requests[0].messages[0]["content"]


async def test_a_skill_shows_as_typed_with_its_text_folded_live_resumed_and_in_titles(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, skills: Path
) -> None:
    """Issue 35: `/review src/a.py` is the user's message, the skill's text folded under it,
    in the live chat and the resumed one; `/sessions` and `/rewind` use the typed text."""
    from forge.agent.history.session_file import SessionStore
    from forge.tui.widgets.chat_blocks import ExpansionBlock, UserMessageBlock

    def chat(app: ForgeApp) -> list[tuple[str, str]]:
        kinds = (UserMessageBlock, ExpansionBlock)
        return [
            (type(block).__name__, block.text)
            for block in app.chat.children
            if isinstance(block, kinds)
        ]

    llm_server.enqueue(Text("Reviewed."))
    store = configure(llm_server, monkeypatch)
    app = make_app(store, workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot, "start")
        await submit(pilot, "/review src/a.py")
        await wait_idle(pilot)
        live = chat(app)
        folded = app.chat.query_one(ExpansionBlock)
        assert folded.collapsed
        turns = [point.text for point in app.session.history.rewind_points()]
    sent = llm_server.requests[0].messages[-1]["content"]
    assert live == [("UserMessageBlock", "/review src/a.py"), ("ExpansionBlock", sent)]
    assert "<skill" in sent and "<skill" not in live[0][1]
    assert turns == ["/review src/a.py"]
    [info] = SessionStore().list_sessions(workspace)
    assert info.title == "/review src/a.py"

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: resumed.chat.children, "the history")
        await pilot.pause()
        assert chat(resumed) == live


async def test_skills_lists_and_disabling_is_saved_in_the_user_config(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, skills: Path
) -> None:
    store = configure(llm_server, monkeypatch)
    app = make_app(store, workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_idle(pilot, "start")
        await submit(pilot, "/skills list")
        await pilot.pause()
        listing = notices(app)[-1]
        await submit(pilot, "/skills disable rev*")
        await wait_idle(pilot)
        disabled_names = [command.name for command in all_commands()]
        after_disabling = saved_disabled(store.path)
        await submit(pilot, "/review a")
        await wait_idle(pilot)
        after_disable = notices(app)[-1]
        await submit(pilot, "/skills enable rev*")
        await wait_idle(pilot)
        enabled_names = [command.name for command in all_commands()]
    assert "| `review` | .claude/skills (project) | enabled |" in listing
    assert "model only" in listing and "Not used:" in listing
    assert "review" not in disabled_names and "review" in enabled_names
    # Said as it is, not "Unknown command" (issue 35).
    assert "The skill `/review` is disabled" in after_disable
    assert "`/skills enable review` turns it on" in after_disable
    assert llm_server.requests == []
    assert after_disabling == ["rev*"]
    assert saved_disabled(store.path) == []
    assert os.stat(store.path).st_mode & 0o777 == 0o600


async def test_the_skills_screen_toggles_and_saves_on_close(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, skills: Path
) -> None:
    store = configure(llm_server, monkeypatch)
    app = make_app(store, workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_idle(pilot, "start")
        await submit(pilot, "/skills")
        await wait_until(pilot, lambda: isinstance(app.screen, SkillsScreen), "the screen")
        options = app.screen.query_one(SelectionList)
        shown = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert options.highlighted == 0  # "explain", the first by name
        await pilot.press("space")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SkillsScreen), "closed")
        await wait_idle(pilot)
        names = [command.name for command in all_commands()]
        told = notices(app)[-1]
    assert shown[3].startswith("review  .claude/skills (project) · ")
    assert any("model only" in line for line in shown)
    assert saved_disabled(store.path) == ["explain"]
    assert "`explain`" in told
    assert "explain" in names  # the custom command of that name stays
    assert app.session.skills is not None and not app.session.skills.enabled("explain")


async def test_the_skills_screen_shows_no_markdown_marks_at_80_by_24(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, skills: Path
) -> None:
    """The screen's lines are plain text (markup off): backticks would show as they are."""
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot, "start")
        await submit(pilot, "/skills")
        await wait_until(pilot, lambda: isinstance(app.screen, SkillsScreen), "the screen")
        lines = [str(static.render()) for static in app.screen.query(Static)]
        await pilot.press("escape")
    assert any("skills.disabled" in line for line in lines)
    assert any("could not be used" in line for line in lines)  # the Broken skill
    assert not any("`" in line for line in lines)


async def test_a_skills_change_the_config_file_refuses_is_told_and_the_app_goes_on(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, skills: Path
) -> None:
    """A config file Forge cannot read is never overwritten: toggling a skill then says so
    in the chat (a ConfigSaveError is no OSError; it used to end the app)."""
    store = configure(llm_server, monkeypatch)
    write(store.path, "llm: [unclosed\n")
    store.load()
    app = make_app(store, workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot, "start")
        await submit(pilot, "/skills")
        await wait_until(pilot, lambda: isinstance(app.screen, SkillsScreen), "the screen")
        await pilot.press("space")
        await pilot.press("escape")
        await wait_until(pilot, lambda: "Could not save" in notices(app)[-1], "the error")
        assert app.is_running
    assert store.path.read_text(encoding="utf-8") == "llm: [unclosed\n"
