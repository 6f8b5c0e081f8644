"""Skills in the TUI (docs/adr/0046): `/skills` opens a screen listing them (source, size,
state) where Space enables or disables one (`skills.disabled` in the user config), `/skills
list` shows them in the chat, and `/name args` runs a skill as the user's message. Built-in
commands win over custom commands, which win over skills; each clash and each skill that
could not be used is said once per session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge.session.skills import SkillCatalog, SkillStatus, is_disabled, skill_commands
from forge.text_safety import terminal_safe
from forge.tui.command_table import SLASH_COMMANDS, SlashCommand, set_skill_commands
from forge.tui.messages import SkillsDisabledSaveRequested, UserMessageRequested
from forge.tui.screens.skills import SkillRow, SkillsScreen

if TYPE_CHECKING:
    from forge.session.custom_commands import CustomCommands
    from forge.tui.command_host import CommandHost

USAGE = (
    "Usage: `/skills` (a screen to enable or disable them), `/skills list`, "
    "`/skills enable NAME`, `/skills disable NAME` (a name or a glob)."
)


class SkillSlashCommands:
    """The skills' part of `SlashCommandRunner`: `command_skills` and running `/name`."""

    app: CommandHost
    custom: CustomCommands

    _skills_told: set[str]

    def _skills_catalog(self) -> SkillCatalog | None:
        return self.app.session.skills

    def _taken_names(self) -> list[str]:
        return [command.name for command in SLASH_COMMANDS] + list(self.custom.commands)

    async def load_skill_commands(self) -> None:
        """(Re)read the skills: the `/name` table for completion, help and the palette, and,
        once per session, what could not be used (file and rule), clashes and a capped
        listing."""
        catalog = self._skills_catalog()
        if not hasattr(self, "_skills_told"):
            self._skills_told = set()
        if catalog is None:
            set_skill_commands(())
            return
        problems = [str(problem) for problem in catalog.problems]
        found = skill_commands(
            catalog,
            builtin=[command.name for command in SLASH_COMMANDS],
            custom=list(self.custom.commands),
        )
        set_skill_commands(
            tuple(
                SlashCommand(
                    skill.name,
                    terminal_safe(skill.description),
                    skill.argument_hint,
                )
                for skill in found.skills.values()
            )
        )
        lines = [*self.app.session.skill_notices, *problems, *found.clashes]
        new = [line for line in lines if line not in self._skills_told]
        self._skills_told.update(new)
        if new:
            text = "\n".join(f"- {terminal_safe(line)}" for line in new)
            await self.app.chat.add_notice(f"Skills:\n\n{text}", kind="error")

    async def run_skill(self, name: str, argument: str) -> bool:
        """Send skill `name` run with `argument` as the user's message; False when no skill
        the user may run has that name (read from disk afresh)."""
        text = self.app.session.skill_command(f"/{name} {argument}", taken=self._taken_names())
        if text is None:
            return False
        await self.load_skill_commands()  # a skill added meanwhile joins completion
        typed = f"/{name} {argument}".rstrip()
        self.app.post_message(UserMessageRequested(text, typed=typed))
        return True

    def skill_not_runnable(self, name: str) -> str | None:
        """Why `/name` does not run the skill `name` that exists (disabled, or for the model
        only); None when there is no such skill."""
        catalog = self._skills_catalog()
        skill = catalog.skills.get(name) if catalog is not None else None
        if catalog is None or skill is None:
            return None
        if not catalog.enabled(name):
            return (
                f"The skill `/{name}` is disabled (`skills.disabled`). "
                f"`/skills enable {name}` turns it on."
            )
        if not skill.user_invocable:
            return f"The skill `{name}` is for the model only (`user-invocable: false`)."
        return None

    async def command_skills(self, argument: str) -> None:
        """Open the skills screen; `list` shows them in the chat; `enable NAME` and
        `disable NAME` change one (stored in the user config)."""
        catalog = self._skills_catalog()
        if catalog is None:
            await self.app.chat.add_notice("Skills are not available in this session.")
            return
        verb, _, name = argument.strip().partition(" ")
        name = name.strip()
        if verb in ("", "list"):
            catalog.refresh()
            await self.load_skill_commands()
            if verb == "list":
                await self.app.chat.add_notice(skills_report(catalog))
            else:
                self.app.push_screen(skills_screen(catalog), callback=self._screen_closed)
            return
        if verb not in ("enable", "disable") or not name:
            await self.app.chat.add_notice(USAGE, kind="error")
            return
        disabled = [pattern for pattern in self.app.settings.skills.disabled if pattern != name]
        if verb == "disable":
            disabled.append(name)
        await self._save_disabled(disabled, f"Skill `{terminal_safe(name)}` {verb}d")

    async def _screen_closed(self, left_disabled: list[str] | None) -> None:
        catalog = self._skills_catalog()
        if left_disabled is None or catalog is None:
            return
        patterns = list(self.app.settings.skills.disabled)
        for status in catalog.statuses():
            name = status.skill.name
            if name in left_disabled and not is_disabled(name, patterns):
                patterns.append(name)
            elif name not in left_disabled and name in patterns:
                patterns.remove(name)
        await self._save_disabled(patterns, "Skills changed")

    async def _save_disabled(self, disabled: list[str], said: str) -> None:
        self.app.post_message(SkillsDisabledSaveRequested(disabled, said))


def skills_screen(catalog: SkillCatalog) -> SkillsScreen:
    """The `/skills` screen for `catalog`'s skills as they are now."""
    rows = [
        SkillRow(status.skill.name, _detail(status), status.enabled)
        for status in catalog.statuses()
    ]
    return SkillsScreen(rows, problems=len(catalog.problems))


def skills_report(catalog: SkillCatalog) -> str:
    """`/skills`: one row per skill (source, status, size), then what could not be used."""
    statuses = catalog.statuses()
    if not statuses and not catalog.problems:
        return (
            "No skills. Put `<name>/SKILL.md` folders in `.forge/skills/`, `.agents/skills/` "
            "or `.claude/skills/` (project), or the user's `skills/` config folder or "
            "`~/.agents/skills/`."
        )
    rows = ["| Skill | Source | Status | Size |", "|---|---|---|---|"]
    rows.extend(_row(status) for status in statuses)
    text = "\n".join(rows)
    if catalog.problems:
        problems = "\n".join(f"- {_cell(str(problem))}" for problem in catalog.problems)
        text += f"\n\nNot used:\n\n{problems}"
    return text + "\n\n" + USAGE


def _flags(status: SkillStatus) -> list[str]:
    skill = status.skill
    flags = ["loaded"] if status.loaded else []
    if not skill.model_invocable:
        flags.append("user only")
    if not skill.user_invocable:
        flags.append("model only")
    return flags


def _size(size: int) -> str:
    return f"{size / 1024:.1f} KB" if size >= 1024 else f"{size} B"


def _detail(status: SkillStatus) -> str:
    skill = status.skill
    return " · ".join([f"{skill.location} ({skill.scope})", _size(skill.size), *_flags(status)])


def _row(status: SkillStatus) -> str:
    skill = status.skill
    state = ["enabled" if status.enabled else "disabled", *_flags(status)]
    return (
        f"| `{_cell(skill.name)}` | {_cell(skill.location)} ({skill.scope}) | "
        f"{', '.join(state)} | {_size(skill.size)} |"
    )


def _cell(text: str) -> str:
    return terminal_safe(text).replace("|", "\\|").replace("\n", " ")
