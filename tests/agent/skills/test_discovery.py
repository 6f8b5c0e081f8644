"""Finding skills in the five folders, who wins a clash, and every agentskills.io rule: each
broken rule leaves the skill out with a problem naming its file and the rule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forge.agent.skills.catalog import SkillCatalog, is_disabled
from forge.agent.skills.discovery import SkillRoot, discover_skills, skill_roots
from tests.agent.skills.helpers import write_raw, write_skill


def user_config() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "forge"


def home() -> Path:
    return Path(os.environ["HOME"])


def roots(workspace: Path) -> list[SkillRoot]:
    return skill_roots(workspace)


@pytest.mark.parametrize(
    ("where", "scope"),
    [
        (".forge/skills", "project"),
        (".agents/skills", "project"),
        (".claude/skills", "project"),
        ("USER_CONFIG/skills", "user"),
        ("HOME/.agents/skills", "user"),
    ],
)
def test_a_skill_is_found_in_each_location(workspace: Path, where: str, scope: str) -> None:
    base = (
        workspace / where
        if not where.startswith(("USER_CONFIG", "HOME"))
        else Path(where.replace("USER_CONFIG", str(user_config())).replace("HOME", str(home())))
    )
    path = write_skill(base, "pdf-forms", "Fill PDF forms.", "Use ${SKILL_DIR}/fill.py\n")
    found = discover_skills(roots(workspace))
    assert found.problems == []
    skill = found.skills["pdf-forms"]
    assert (skill.path, skill.scope, skill.description) == (path, scope, "Fill PDF forms.")
    assert skill.expanded_body() == f"Use {path.parent}/fill.py"


def test_project_beats_user_and_the_clash_is_reported_once(workspace: Path) -> None:
    project = write_skill(workspace / ".claude" / "skills", "review", "Project review.")
    user = write_skill(user_config() / "skills", "review", "User review.")
    agents = write_skill(home() / ".agents" / "skills", "review", "Agents review.")
    forge_first = write_skill(workspace / ".forge" / "skills", "lint", "Forge lint.")
    write_skill(workspace / ".agents" / "skills", "lint", "Agents lint.")
    catalog = SkillCatalog(workspace)
    assert catalog.skills["review"].path == project
    assert catalog.skills["lint"].path == forge_first
    first = catalog.refresh_problems()
    clashes = {problem.path: problem for problem in first if problem.rule == "clash"}
    assert set(clashes) == {user, agents, workspace / ".agents/skills/lint/SKILL.md"}
    assert ".claude/skills" in clashes[user].detail
    assert catalog.refresh() == []  # the same clashes are not said again


def _one_problem(workspace: Path, path: Path, rule: str, **kwargs: int) -> None:
    found = discover_skills(roots(workspace), **kwargs)
    assert found.skills == {}
    assert [(problem.path, problem.rule) for problem in found.problems] == [(path, rule)]
    assert str(path) in str(found.problems[0])


@pytest.fixture
def skills_dir(workspace: Path) -> Path:
    return workspace / ".forge" / "skills"


def test_name_missing(workspace: Path, skills_dir: Path) -> None:
    path = write_raw(skills_dir, "x", "---\ndescription: d\n---\nbody\n")
    _one_problem(workspace, path, "name-missing")


def test_name_longer_than_64_characters(workspace: Path, skills_dir: Path) -> None:
    name = "a" * 65
    path = write_skill(skills_dir, name)
    _one_problem(workspace, path, "name-length")


def test_a_64_character_name_is_fine(workspace: Path, skills_dir: Path) -> None:
    write_skill(skills_dir, "a" * 64)
    assert list(discover_skills(roots(workspace)).skills) == ["a" * 64]


@pytest.mark.parametrize("name", ["PDF", "-pdf", "pdf-", "pdf--forms", "pdf_forms", "pdf.x"])
def test_name_format(workspace: Path, skills_dir: Path, name: str) -> None:
    path = write_skill(skills_dir, name)
    _one_problem(workspace, path, "name-format")


def test_name_differs_from_the_folder(workspace: Path, skills_dir: Path) -> None:
    path = write_skill(skills_dir, "pdf", folder="pdf-forms")
    _one_problem(workspace, path, "name-folder")


def test_description_missing(workspace: Path, skills_dir: Path) -> None:
    path = write_raw(skills_dir, "pdf", "---\nname: pdf\n---\nbody\n")
    _one_problem(workspace, path, "description-missing")


def test_description_empty(workspace: Path, skills_dir: Path) -> None:
    path = write_raw(skills_dir, "pdf", "---\nname: pdf\ndescription: '  '\n---\nbody\n")
    _one_problem(workspace, path, "description-missing")


def test_description_longer_than_1024_characters(workspace: Path, skills_dir: Path) -> None:
    path = write_skill(skills_dir, "pdf", "d" * 1025)
    _one_problem(workspace, path, "description-length")


def test_compatibility_longer_than_500_characters(workspace: Path, skills_dir: Path) -> None:
    path = write_skill(skills_dir, "pdf", extra=f"compatibility: {'c' * 501}\n")
    _one_problem(workspace, path, "compatibility-length")


def test_metadata_must_map_names_to_text(workspace: Path, skills_dir: Path) -> None:
    path = write_skill(skills_dir, "pdf", extra="metadata: [a, b]\n")
    _one_problem(workspace, path, "metadata")


def test_license_must_be_text(workspace: Path, skills_dir: Path) -> None:
    path = write_skill(skills_dir, "pdf", extra="license: {a: b}\n")
    _one_problem(workspace, path, "field-type")


def test_allowed_tools_must_be_text(workspace: Path, skills_dir: Path) -> None:
    path = write_skill(skills_dir, "pdf", extra="allowed-tools: {a: b}\n")
    _one_problem(workspace, path, "allowed-tools")


def test_no_front_matter(workspace: Path, skills_dir: Path) -> None:
    path = write_raw(skills_dir, "pdf", "# Just a body\n")
    _one_problem(workspace, path, "front-matter")


def test_malformed_front_matter(workspace: Path, skills_dir: Path) -> None:
    path = write_raw(skills_dir, "pdf", "---\nname: [pdf\n---\nbody\n")
    _one_problem(workspace, path, "front-matter")


def test_not_utf8(workspace: Path, skills_dir: Path) -> None:
    path = write_raw(skills_dir, "pdf", b"---\nname: pdf\ndescription: \xff\n---\n")
    _one_problem(workspace, path, "read")


def test_larger_than_the_size_cap(workspace: Path, skills_dir: Path) -> None:
    path = write_skill(skills_dir, "pdf", body="x" * 2000)
    _one_problem(workspace, path, "size", max_file_bytes=1000)
    assert "skills.max_file_bytes" in str(
        discover_skills(roots(workspace), max_file_bytes=1000).problems[0]
    )


def test_optional_fields_are_read(workspace: Path, skills_dir: Path) -> None:
    write_skill(
        skills_dir,
        "pdf",
        extra=(
            "license: MIT\ncompatibility: needs poppler\nmetadata:\n  author: me\n  version: 1\n"
            "allowed-tools: Read Bash(git status:*) execute_command(make test)\n"
            "user-invocable: false\ndisable-model-invocation: true\nargument-hint: <file>\n"
        ),
    )
    skill = discover_skills(roots(workspace)).skills["pdf"]
    assert (skill.license, skill.compatibility) == ("MIT", "needs poppler")
    assert skill.metadata == {"author": "me", "version": "1"}
    assert skill.allowed_tools == ("Read", "Bash(git status:*)", "execute_command(make test)")
    assert (skill.user_invocable, skill.model_invocable) == (False, False)


def test_a_folder_without_skill_md_is_not_a_skill(workspace: Path, skills_dir: Path) -> None:
    (skills_dir / "notes").mkdir(parents=True)
    (skills_dir / "notes" / "README.md").write_text("hi", encoding="utf-8")
    found = discover_skills(roots(workspace))
    assert (found.skills, found.problems) == ({}, [])


def test_disabled_names_and_globs(workspace: Path, skills_dir: Path) -> None:
    for name in ("pdf-forms", "pdf-merge", "review"):
        write_skill(skills_dir, name)
    catalog = SkillCatalog(workspace, disabled=["pdf-*"])
    assert [skill.name for skill in catalog.for_model()] == ["review"]
    assert [status.enabled for status in catalog.statuses()] == [False, False, True]
    assert is_disabled("review", ["review"]) and not is_disabled("review", ["rev"])
