"""Subagents: child agents the `task` tool runs, each in a context of its own (docs/adr/0045)."""
