"""The skills' listing: name, description and path of each skill the model may load, within
its share of the window: whole, then with shortened descriptions, then with skills left out
and a notice naming them."""

from __future__ import annotations

from pathlib import Path

from forge.agent.skills.catalog import SkillCatalog
from forge.agent.skills.listing import build_listing
from tests.agent.skills.helpers import write_skill


def characters(text: str) -> int:
    return len(text)


def catalog_with(workspace: Path, count: int, description: str) -> SkillCatalog:
    for index in range(count):
        write_skill(workspace / ".forge" / "skills", f"skill-{index:02d}", description)
    return SkillCatalog(workspace)


def test_the_listing_holds_name_description_and_path_not_the_body(workspace: Path) -> None:
    write_skill(workspace / ".forge" / "skills", "review", "Review a diff.", "SECRET BODY\n")
    write_skill(
        workspace / ".agents" / "skills", "hidden", extra="disable-model-invocation: true\n"
    )
    listing = build_listing(
        SkillCatalog(workspace).for_model(), workspace, budget_tokens=10_000, count=characters
    )
    assert "- review: Review a diff. (.forge/skills/review/SKILL.md)" in listing.text
    assert "SECRET BODY" not in listing.text
    assert "hidden" not in listing.text
    assert listing.notice() == ""


def test_no_skills_no_listing(workspace: Path) -> None:
    assert build_listing([], workspace, budget_tokens=10, count=characters).text == ""


def test_over_its_share_descriptions_are_shortened_first(workspace: Path) -> None:
    catalog = catalog_with(workspace, 3, "word " * 150)
    whole = build_listing(catalog.for_model(), workspace, budget_tokens=100_000, count=characters)
    budget = len(whole.text) // 2
    listing = build_listing(catalog.for_model(), workspace, budget_tokens=budget, count=characters)
    assert len(listing.text) <= budget
    assert listing.shortened and listing.left_out == ()
    assert listing.text.count("…") == 3
    assert "descriptions shortened" in listing.notice()


def test_then_the_last_skills_are_left_out_and_named(workspace: Path) -> None:
    catalog = catalog_with(workspace, 20, "word " * 150)
    listing = build_listing(catalog.for_model(), workspace, budget_tokens=900, count=characters)
    assert len(listing.text) <= 900
    assert listing.left_out and listing.left_out[-1] == "skill-19"
    assert "skill-00" in listing.text and "skill-19" not in listing.text
    notice = listing.notice()
    assert all(name in notice for name in listing.left_out)
    assert "More skills exist" in listing.text


def test_the_listing_sits_after_the_tool_rules_and_before_agents_md(workspace: Path) -> None:
    from forge.agent.system_prompt import build_system_prompt
    from forge.agent.tools.registry import default_registry

    (workspace / "AGENTS.md").write_text("Project rules.", encoding="utf-8")
    listing = "Skills (x):\n- review: Review. (.forge/skills/review/SKILL.md)"
    prompt = build_system_prompt(workspace, default_registry().specs(), skills_listing=listing)
    assert prompt.index("Your tools:") < prompt.index(listing) < prompt.index("Project rules.")
    assert build_system_prompt(workspace, default_registry().specs()).count("Skills (") == 0
