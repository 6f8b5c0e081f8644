"""The `agents:` section of the settings: subagents run by the `task` tool (docs/adr/0045)."""

from __future__ import annotations

from pydantic import ConfigDict, field_validator

from forge.config.field_docs import DocumentedModel


class AgentsSettings(DocumentedModel):
    """Subagents: child agents the `task` tool runs, each in a context of its own
    (`.forge/agents/`, `.claude/agents/` and the user's `agents/` folder; docs/adr/0045)."""

    model_config = ConfigDict(extra="ignore", validate_default=True)
    """As every section of `Settings` (`forge.config.settings`)."""

    enabled: bool = True
    """Offer the `task` tool (children run only when the model calls it)."""
    max_parallel: int = 4
    """Children running at the same time; more `task` calls in one reply wait for a slot."""
    max_file_bytes: int = 64 * 1024
    """Bytes of one agent definition file; a larger file is refused, naming it."""

    @field_validator("max_parallel", "max_file_bytes")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be at least 1")
        return value
