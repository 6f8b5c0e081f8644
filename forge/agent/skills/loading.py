"""What loading a skill gives the model or the user: its body, `${SKILL_DIR}` expanded and
arguments put in (`$ARGUMENTS`, `$1`, … as custom commands, docs/adr/0026), under a header
line naming it; and the re-attach text for skills a summary took out of the conversation."""

from __future__ import annotations

from collections.abc import Sequence

from forge.agent.input.custom_commands import CustomCommand
from forge.agent.skills.model import Skill
from forge.llm.messages import Message


def skill_header(skill: Skill) -> str:
    """The first line of a loaded skill's text (also how a re-attach finds it)."""
    return f'<skill name="{skill.name}" folder="{skill.directory}">'


def loaded_text(skill: Skill, arguments: str = "") -> str:
    """The text the model reads for `skill` run with `arguments`."""
    body = skill.expanded_body()
    if arguments.strip() or "$ARGUMENTS" in body:
        body = CustomCommand(skill.name, body, skill.path, skill.scope).expand(arguments)
    return f"{skill_header(skill)}\n{body}\n</skill>"


def missing_from(
    messages: Sequence[Message], skills: Sequence[Skill], *, sending: str = ""
) -> list[Skill]:
    """The `skills` whose loaded text no message holds any more (a summary or a rewind took
    it out), nor the message being sent now (`sending`: a `/name args` run counts as loaded
    before its message is in the conversation)."""
    return [
        skill
        for skill in skills
        if skill_header(skill) not in sending
        and not any(skill_header(skill) in (message.content or "") for message in messages)
    ]


def reattached_text(skills: Sequence[Skill]) -> str:
    """What goes before the next message when loaded skills were summarized away."""
    parts = [
        "Skills loaded earlier in this session (re-attached after the conversation was summarized):"
    ]
    parts.extend(loaded_text(skill) for skill in skills)
    return "\n\n".join(parts)
