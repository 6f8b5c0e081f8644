"""`/hooks`: the session's hooks as plain text (docs/adr/0043) — every configured hook with
its event, matcher, command, the file that defines it and whether it runs."""

from __future__ import annotations

from forge.agent.hooks.config import PROJECT_HOOK_FILES
from forge.agent.hooks.engine import Hooks

NO_HOOKS = (
    "No hooks are configured. Define them under `hooks:` in config.yaml, in "
    ".forge/hooks.json or in .claude/settings.json (see the README's Hooks section)."
)


def hooks_report(hooks: Hooks | None) -> str:
    """One line per hook, grouped by the file that defines it; then the files' problems."""
    listed = hooks.listing() if hooks is not None else []
    if not listed:
        lines = [NO_HOOKS]
    else:
        lines = ["Hooks (event, matcher: command — state):"]
        origin = None
        for hook in listed:
            if hook.origin != origin:
                origin = hook.origin
                kind = "project file" if hook.origin in PROJECT_HOOK_FILES else "user config"
                lines.append(f"\n{origin} ({kind}):")
            matcher = hook.matcher.strip() or "*"
            lines.append(f"  {hook.event.value}, {matcher}: {hook.command} — {hook.state}")
    if hooks is not None:
        problems = [w for f in (*hooks.files, *hooks.untrusted) for w in f.warnings]
        if problems:
            lines.append("\nProblems:")
            lines.extend(f"  {problem}" for problem in problems)
        if hooks.disabled and listed:
            lines.append("\nAll hooks are off (hooks.disabled or --no-hooks).")
    return "\n".join(lines)
