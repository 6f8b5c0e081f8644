"""Checking the overlay's fields with the settings models' own rules, as the user types.

`SettingsDraft` holds the text of every field over the settings the overlay opened with. Its
checks run the section's pydantic model on the draft, so a rule lives in one place
(`forge.config.settings`) and cross-field rules ("auto ≥ warning") are reported on the field
the model names. `SettingValidator` is the Textual face of one field's check.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from textual.validation import ValidationResult, Validator

from forge.config.settings import Settings
from forge.tui.settings.fields import FieldParseError, SettingField

_PYDANTIC_VALUE_ERROR_PREFIX = "Value error, "


class DraftInvalidError(ValueError):
    """The draft has invalid fields; `reasons` maps each field's dotted key to why."""

    def __init__(self, reasons: Mapping[str, str]) -> None:
        self.reasons = dict(reasons)
        super().__init__("; ".join(f"{key}: {reason}" for key, reason in self.reasons.items()))


def _reason(error_message: str) -> str:
    """Pydantic's message without its "Value error, " preamble."""
    return error_message.removeprefix(_PYDANTIC_VALUE_ERROR_PREFIX)


class SettingsDraft:
    """The overlay's edits: the field texts over `base`, checked with the settings models."""

    def __init__(self, base: Settings, fields: Iterable[SettingField]) -> None:
        self.base = base
        self.fields: dict[str, SettingField] = {field.key: field for field in fields}
        self.initial_texts: dict[str, str] = {
            key: field.to_text(field.value_of(base)) for key, field in self.fields.items()
        }
        self.texts: dict[str, str] = dict(self.initial_texts)

    def set_text(self, key: str, text: str) -> None:
        """Record what the field `key` now holds."""
        self.texts[key] = text

    def errors(self, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
        """Why each invalid field is invalid, by dotted key; empty when the draft is valid.

        `overrides` replaces some field texts for this check only (a value being typed).
        """
        texts = {**self.texts, **(overrides or {})}
        reasons: dict[str, str] = {}
        for section in {field.section for field in self.fields.values()}:
            _, section_reasons = self._validate_section(section, texts)
            reasons.update(section_reasons)
        return reasons

    def error_for(self, key: str, text: str) -> str | None:
        """Why the field `key` would be invalid holding `text`, or None if it would be valid."""
        field = self.fields[key]
        _, reasons = self._validate_section(field.section, {**self.texts, key: text})
        return reasons.get(key)

    def changed_keys(self) -> set[str]:
        """Dotted keys whose value differs from the one the overlay opened with.

        Compared as values, not text, so retyping "0.85" as "0.850" is not a change (and an
        environment value retyped unchanged is still not written to the file).
        """
        changed: set[str] = set()
        for key, field in self.fields.items():
            if self.texts[key] == self.initial_texts[key]:
                continue
            try:
                value = field.parse(self.texts[key])
            except FieldParseError:
                changed.add(key)
                continue
            if value != field.value_of(self.base):
                changed.add(key)
        return changed

    def build(self) -> Settings:
        """The settings the draft describes. Raises DraftInvalidError if any field is invalid."""
        reasons: dict[str, str] = {}
        sections: dict[str, BaseModel] = {}
        for section in {field.section for field in self.fields.values()}:
            model, section_reasons = self._validate_section(section, self.texts)
            reasons.update(section_reasons)
            if model is not None:
                sections[section] = model
        if reasons:
            ordered = {key: reasons[key] for key in self.fields if key in reasons}
            raise DraftInvalidError(ordered)
        # Sections are validated above and Settings has no cross-section rules, so a copy is
        # enough; rebuilding through Settings() would re-read the environment.
        return self.base.model_copy(update=sections)

    def _validate_section(
        self, section: str, texts: Mapping[str, str]
    ) -> tuple[BaseModel | None, dict[str, str]]:
        """The section model built from `texts`, and the reasons for its invalid fields."""
        section_fields = [field for field in self.fields.values() if field.section == section]
        model_class = section_fields[0].section_model
        data: dict[str, Any] = dict(getattr(self.base, section))
        for group in {field.group for field in section_fields if field.group}:
            data[group] = dict(getattr(getattr(self.base, section), group))
        reasons: dict[str, str] = {}
        for field in section_fields:
            target = data[field.group] if field.group else data
            try:
                target[field.name] = field.parse(texts[field.key])
            except FieldParseError as error:
                reasons[field.key] = str(error)
        try:
            model = model_class.model_validate(data)
        except ValidationError as error:
            for problem in error.errors():
                location = problem["loc"]
                # A field the overlay does not show is reported under its own key (or the
                # section's), so the save is still blocked with a reason.
                key = f"{section}.{location[0]}" if location else section
                nested = f"{key}.{location[1]}" if len(location) > 1 else ""
                key = nested if nested in self.fields else key
                reasons.setdefault(key, _reason(problem["msg"]))
            return None, reasons
        return (None if reasons else model), reasons


class SettingValidator(Validator):
    """Validates one field's text against the settings model, in the context of the draft."""

    def __init__(self, draft: SettingsDraft, field: SettingField) -> None:
        super().__init__()
        self.draft = draft
        self.field = field

    def validate(self, value: str) -> ValidationResult:
        """Success, or a failure whose description is the model's reason."""
        reason = self.draft.error_for(self.field.key, value)
        if reason is None:
            return self.success()
        return self.failure(reason, value)
