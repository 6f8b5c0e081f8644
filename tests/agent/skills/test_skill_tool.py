"""The `skill` tool: the body with ${SKILL_DIR} expanded, arguments, an unknown or disabled
name's error listing the skills, a skill added on disk found at the next call, and a loaded
skill's folder readable by read_file/list_files though outside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forge.agent.skills.catalog import SkillCatalog
from forge.agent.tools.base import ToolContext, ToolError
from forge.agent.tools.list_files import ListFilesArgs, ListFilesTool
from forge.agent.tools.read_file import ReadFileArgs, ReadFileTool
from forge.agent.tools.skill import SkillArgs, SkillTool
from tests.agent.skills.helpers import write_skill


def user_skills() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "forge" / "skills"


async def test_the_body_comes_back_with_skill_dir_expanded(workspace: Path) -> None:
    path = write_skill(user_skills(), "deploy", "Deploy it.", "Run ${SKILL_DIR}/go.sh $1\n")
    catalog = SkillCatalog(workspace)
    result = await SkillTool(catalog).run(
        SkillArgs(name="deploy", arguments="prod"), ToolContext(workspace)
    )
    assert not result.is_error
    assert f"Run {path.parent}/go.sh prod" in result.content
    assert [skill.name for skill in catalog.loaded()] == ["deploy"]


async def test_an_unknown_name_lists_the_skills(workspace: Path) -> None:
    write_skill(workspace / ".forge" / "skills", "review", "Review a diff.")
    write_skill(workspace / ".forge" / "skills", "secret", extra="disable-model-invocation: true\n")
    tool = SkillTool(SkillCatalog(workspace))
    with pytest.raises(ToolError) as raised:
        await tool.run(SkillArgs(name="reviwe"), ToolContext(workspace))
    message = str(raised.value)
    assert "unknown skill 'reviwe'" in message and "review (Review a diff.)" in message
    assert "secret" not in message.split("available skills:")[1]
    with pytest.raises(ToolError, match="only be run by the user"):
        await tool.run(SkillArgs(name="secret"), ToolContext(workspace))


async def test_a_disabled_skill_is_refused(workspace: Path) -> None:
    write_skill(workspace / ".forge" / "skills", "review")
    tool = SkillTool(SkillCatalog(workspace, disabled=["rev*"]))
    with pytest.raises(ToolError, match="disabled by the user"):
        await tool.run(SkillArgs(name="review"), ToolContext(workspace))


async def test_a_skill_added_on_disk_is_found_at_the_next_call(workspace: Path) -> None:
    catalog = SkillCatalog(workspace)
    write_skill(workspace / ".agents" / "skills", "late", "Came later.", "Late body\n")
    result = await SkillTool(catalog).run(SkillArgs(name="late"), ToolContext(workspace))
    assert "Late body" in result.content


async def test_a_loaded_user_skills_folder_is_readable_only_once_loaded(workspace: Path) -> None:
    path = write_skill(user_skills(), "deploy", body="See reference.md\n")
    (path.parent / "reference.md").write_text("the reference\n", encoding="utf-8")
    catalog = SkillCatalog(workspace)
    reader = ReadFileTool(readable=catalog.readable_directories)
    lister = ListFilesTool(readable=catalog.readable_directories)
    target = str(path.parent / "reference.md")
    with pytest.raises(ToolError, match="outside the workspace"):
        await reader.run(ReadFileArgs(path=target), ToolContext(workspace))
    await SkillTool(catalog).run(SkillArgs(name="deploy"), ToolContext(workspace))
    read = await reader.run(ReadFileArgs(path=target), ToolContext(workspace))
    assert "the reference" in read.content
    listed = await lister.run(ListFilesArgs(path=str(path.parent)), ToolContext(workspace))
    assert "reference.md" in listed.content
    with pytest.raises(ToolError, match="outside the workspace"):  # only inside the folder
        await reader.run(ReadFileArgs(path=str(path.parent.parent)), ToolContext(workspace))
