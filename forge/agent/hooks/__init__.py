"""Lifecycle hooks compatible with Claude Code's (issue 29, docs/adr/0043): shell commands the
user's config or a trusted workspace defines, run at PreToolUse, PostToolUse, Stop and the
other `HookEvent`s with the event's JSON on stdin; their exit code and output allow, deny,
ask, rewrite a call's input or add context.

- `config` reads the definitions (config.yaml `hooks:`, `.forge/hooks.json`,
  `.claude/settings.json`) with a warning per bad entry;
- `matching` knows Forge's and Claude Code's tool names and input keys;
- `payloads` builds each event's stdin JSON;
- `runner` runs the commands (parallel, deduplicated, process groups, timeouts, output cap);
- `decisions` reads and aggregates what they said into a typed outcome per event;
- `precedence` combines a PreToolUse outcome with the approval policy;
- `engine.Hooks` is the face the session uses: `load`, `active`, `run`.

Nothing is re-exported here: import each name from its module.
"""
