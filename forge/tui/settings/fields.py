"""The fields the settings overlay edits: which setting, how it reads as text, how text parses.

Each `SettingField` names one key of `forge.config.Settings` (`llm.model`), the widget kind
and the label. Text conversion lives here so the screen, the validator and the save path agree
on what a field's text means; the rules themselves stay in the pydantic models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel, SecretStr

from forge.config.settings import Settings


class FieldKind(Enum):
    """How a field's text maps to a setting value."""

    TEXT = "text"
    """A string; empty stays empty (the model decides whether that is allowed)."""
    OPTIONAL_TEXT = "optional_text"
    """A string where empty means unset (e.g. the summarization model)."""
    SECRET = "secret"
    """A secret string, shown masked."""
    NUMBER = "number"
    """A decimal number."""
    WHOLE_NUMBER = "whole_number"
    """An integer."""
    OPTIONAL_WHOLE_NUMBER = "optional_whole_number"
    """An integer where empty means unset (None)."""
    NAME_LIST = "name_list"
    """A list of names typed as a comma-separated line."""
    SWITCH = "switch"
    """A yes/no setting typed as "true" or "false" (also yes/no, on/off)."""


class FieldParseError(ValueError):
    """The text cannot be read as the field's kind; `str()` is the reason shown to the user."""


@dataclass(frozen=True)
class SettingField:
    """One editable setting: `section.name` in `Settings`, shown with `label`."""

    section: str
    """Top-level section of `Settings` (`llm`, `context`, `tools`)."""
    name: str
    """Field name inside the section."""
    label: str
    """What the overlay calls it."""
    kind: FieldKind
    """How its text is read."""
    placeholder: str = ""
    """Shown in the empty input."""
    group: str = ""
    """The sub-section inside the section that holds the field (`sandbox` for
    `tools.sandbox.mode`); empty for a key of the section itself."""

    @property
    def key(self) -> str:
        """The dotted key (`llm.summarization_model`, `tools.sandbox.mode`), as
        `LoadResult.env_keys` names it."""
        return ".".join(part for part in (self.section, self.group, self.name) if part)

    @property
    def slug(self) -> str:
        """The key as a widget id part (`tools-sandbox-mode`)."""
        return self.key.replace(".", "-")

    @property
    def widget_id(self) -> str:
        """The id of the field's Input (`field-llm-model`)."""
        return f"field-{self.slug}"

    @property
    def section_model(self) -> type[BaseModel]:
        """The pydantic model of the field's section."""
        return _model_of(Settings, self.section)

    @property
    def owner_model(self) -> type[BaseModel]:
        """The pydantic model that declares the field (the section's, or its sub-section's)."""
        model = self.section_model
        return _model_of(model, self.group) if self.group else model

    @property
    def description(self) -> str:
        """The field's docstring from the settings model (the help line)."""
        return self.owner_model.model_fields[self.name].description or ""

    def value_of(self, settings: Settings) -> Any:
        """The field's current value in `settings`."""
        owner = getattr(settings, self.section)
        if self.group:
            owner = getattr(owner, self.group)
        return getattr(owner, self.name)

    def to_text(self, value: Any) -> str:
        """The text an input shows for `value`."""
        if value is None:
            return ""
        if isinstance(value, SecretStr):
            return value.get_secret_value()
        if self.kind is FieldKind.NAME_LIST:
            return ", ".join(str(item) for item in value)
        if self.kind is FieldKind.NUMBER:
            return f"{float(value):g}"
        if self.kind is FieldKind.SWITCH:
            return "true" if value else "false"
        return str(value)

    def parse(self, text: str) -> Any:
        """The value `text` stands for, before the model's own checks.

        Raises FieldParseError when the text is not even of the right shape (not a number).
        """
        stripped = text.strip()
        if self.kind is FieldKind.TEXT:
            return stripped
        if self.kind is FieldKind.OPTIONAL_TEXT:
            return stripped
        if self.kind is FieldKind.SECRET:
            # Keys are pasted; surrounding whitespace is never part of one.
            return SecretStr(stripped)
        if self.kind is FieldKind.NUMBER:
            try:
                return float(stripped)
            except ValueError:
                raise FieldParseError("must be a number") from None
        if self.kind is FieldKind.SWITCH:
            answer = _SWITCH_WORDS.get(stripped.lower())
            if answer is None:
                raise FieldParseError("must be true or false")
            return answer
        if self.kind is FieldKind.OPTIONAL_WHOLE_NUMBER and not stripped:
            return None
        if self.kind in (FieldKind.WHOLE_NUMBER, FieldKind.OPTIONAL_WHOLE_NUMBER):
            try:
                return int(stripped)
            except ValueError:
                raise FieldParseError("must be a whole number") from None
        return [item.strip() for item in stripped.split(",") if item.strip()]


def _model_of(model: type[BaseModel], name: str) -> type[BaseModel]:
    annotation = model.model_fields[name].annotation
    assert isinstance(annotation, type) and issubclass(annotation, BaseModel)
    return annotation


_SWITCH_WORDS = {
    "true": True,
    "yes": True,
    "on": True,
    "false": False,
    "no": False,
    "off": False,
}


@dataclass(frozen=True)
class FieldSection:
    """A titled group of fields in the overlay."""

    title: str
    fields: Sequence[SettingField]


SECTIONS: tuple[FieldSection, ...] = (
    FieldSection(
        "LLM",
        (
            SettingField("llm", "model", "Model", FieldKind.TEXT),
            SettingField(
                "llm", "provider", "Provider", FieldKind.TEXT, placeholder="openai or anthropic"
            ),
            SettingField(
                "llm",
                "summarization_model",
                "Summarization Model",
                FieldKind.OPTIONAL_TEXT,
                placeholder="same as Model",
            ),
            SettingField("llm", "base_url", "Base URL", FieldKind.TEXT),
            SettingField("llm", "api_key", "API Key", FieldKind.SECRET, placeholder="not set"),
            SettingField(
                "llm", "vision", "Images (vision)", FieldKind.TEXT, placeholder="auto, on or off"
            ),
        ),
    ),
    FieldSection(
        "Context",
        (
            SettingField(
                "context",
                "max_tokens",
                "Max tokens",
                FieldKind.OPTIONAL_WHOLE_NUMBER,
                placeholder="from model",
            ),
            SettingField("context", "warning_threshold", "Warning threshold", FieldKind.NUMBER),
            SettingField(
                "context", "auto_summary_threshold", "Auto-summary threshold", FieldKind.NUMBER
            ),
            SettingField("context", "threshold_trigger", "Threshold trigger", FieldKind.NUMBER),
            SettingField(
                "context", "messages_old_threshold", "Old after (messages)", FieldKind.WHOLE_NUMBER
            ),
            SettingField(
                "context",
                "min_tool_calls_to_summarize",
                "Min tool calls to summarize",
                FieldKind.WHOLE_NUMBER,
            ),
            SettingField(
                "context",
                "max_tool_call_distance",
                "Max tool-call distance",
                FieldKind.WHOLE_NUMBER,
            ),
            SettingField(
                "context",
                "excluded_tools",
                "Excluded tools",
                FieldKind.NAME_LIST,
                placeholder="none",
            ),
            SettingField("context", "goal_batch_age", "Goal batch age", FieldKind.WHOLE_NUMBER),
            SettingField(
                "context", "goal_batch_min_turns", "Goal batch min turns", FieldKind.WHOLE_NUMBER
            ),
            SettingField(
                "context", "goal_batch_max_turns", "Goal batch max turns", FieldKind.WHOLE_NUMBER
            ),
            SettingField(
                "context",
                "max_concurrent_summaries",
                "Concurrent summaries",
                FieldKind.WHOLE_NUMBER,
            ),
            SettingField(
                "context", "summary_request_timeout", "Summary timeout (s)", FieldKind.NUMBER
            ),
            SettingField(
                "context", "summary_max_retries", "Summary retries", FieldKind.WHOLE_NUMBER
            ),
            SettingField(
                "context", "ingest_max_share", "Largest tool output share", FieldKind.NUMBER
            ),
            SettingField(
                "context",
                "observation_masking",
                "Mask old tool outputs",
                FieldKind.SWITCH,
                placeholder="true or false",
            ),
            SettingField(
                "context", "mask_keep_recent", "Newest outputs kept", FieldKind.WHOLE_NUMBER
            ),
            SettingField("context", "mask_batch", "Mask batch", FieldKind.WHOLE_NUMBER),
            SettingField(
                "context",
                "tool_call_summaries",
                "LLM tool-call summaries",
                FieldKind.SWITCH,
                placeholder="true or false",
            ),
            SettingField(
                "context", "user_instruction_share", "Your messages' share", FieldKind.NUMBER
            ),
            SettingField(
                "context",
                "work_ledger",
                "Pinned work ledger",
                FieldKind.SWITCH,
                placeholder="true or false",
            ),
        ),
    ),
    FieldSection(
        "Tools",
        (
            SettingField(
                "tools",
                "auto_approve",
                "Auto-approve tools",
                FieldKind.NAME_LIST,
                placeholder="none",
            ),
            SettingField(
                "tools",
                "command_allowlist",
                "Command allowlist",
                FieldKind.NAME_LIST,
                placeholder="none (every command asks)",
            ),
            SettingField(
                "tools",
                "mode",
                "Permission mode",
                FieldKind.TEXT,
                placeholder="read-only, ask, accept-edits or auto",
            ),
            SettingField("tools", "command_timeout", "Command timeout (s)", FieldKind.NUMBER),
            SettingField(
                "tools", "max_background", "Background commands at most", FieldKind.WHOLE_NUMBER
            ),
            SettingField(
                "tools",
                "background_timeout",
                "Background timeout (s)",
                FieldKind.OPTIONAL_WHOLE_NUMBER,
                placeholder="none: until stopped",
            ),
            SettingField(
                "tools",
                "bang_to_conversation",
                "!command output to the model",
                FieldKind.SWITCH,
                placeholder="true or false",
            ),
            SettingField(
                "tools",
                "hide_env",
                "Variables hidden from commands",
                FieldKind.NAME_LIST,
                placeholder="none (provider keys are always hidden)",
            ),
        ),
    ),
    FieldSection(
        "Sandbox (the model's commands)",
        (
            SettingField(
                "tools",
                "mode",
                "Sandbox",
                FieldKind.TEXT,
                placeholder="auto, on or off",
                group="sandbox",
            ),
            SettingField(
                "tools",
                "network",
                "Network inside",
                FieldKind.SWITCH,
                placeholder="true or false",
                group="sandbox",
            ),
            SettingField(
                "tools",
                "allow_unconfined",
                "Unconfined in auto mode",
                FieldKind.SWITCH,
                placeholder="true or false",
                group="sandbox",
            ),
            SettingField(
                "tools",
                "auto_allow",
                "Confined commands without asking",
                FieldKind.SWITCH,
                placeholder="true or false",
                group="sandbox",
            ),
            SettingField(
                "tools",
                "deny_read",
                "Unreadable paths",
                FieldKind.NAME_LIST,
                placeholder="none beyond the built-in secrets",
                group="sandbox",
            ),
            SettingField(
                "tools", "max_processes", "Max processes", FieldKind.WHOLE_NUMBER, group="sandbox"
            ),
        ),
    ),
    FieldSection(
        "Web fetch",
        (
            SettingField(
                "tools",
                "allow_domains",
                "Allowed domains",
                FieldKind.NAME_LIST,
                placeholder="any public address",
                group="web_fetch",
            ),
            SettingField(
                "tools",
                "allow_private",
                "Private addresses",
                FieldKind.SWITCH,
                placeholder="true or false",
                group="web_fetch",
            ),
            SettingField("tools", "timeout", "Timeout (s)", FieldKind.NUMBER, group="web_fetch"),
            SettingField(
                "tools",
                "max_download_bytes",
                "Largest download (bytes)",
                FieldKind.WHOLE_NUMBER,
                group="web_fetch",
            ),
            SettingField(
                "tools",
                "max_result_characters",
                "Largest result (characters)",
                FieldKind.WHOLE_NUMBER,
                group="web_fetch",
            ),
        ),
    ),
    FieldSection(
        "Checkpoints",
        (
            SettingField(
                "checkpoints", "max_bytes", "Checkpoint store (bytes)", FieldKind.WHOLE_NUMBER
            ),
        ),
    ),
    FieldSection(
        "Workspace trust",
        (
            SettingField(
                "trust",
                "env_allowlist",
                "Variables for trusted workspaces",
                FieldKind.NAME_LIST,
                placeholder="none (workspace ${VAR} references stay empty)",
            ),
        ),
    ),
)
"""Every field the overlay shows, in order."""


def all_fields() -> tuple[SettingField, ...]:
    """The fields of every section, in display order."""
    return tuple(field for section in SECTIONS for field in section.fields)
