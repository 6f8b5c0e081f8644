"""Loading and saving the YAML config file.

`load_settings` never raises for a bad file: it reports the problem in `LoadResult.error` and
falls back to defaults plus environment, leaving the file alone. `save_settings` writes
atomically, keeps keys it does not know, and never writes a value the environment supplied
unless the user changed it.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError
from pydantic_settings import SettingsError

from forge.config.atomic import atomic_write_bytes
from forge.config.errors import ConfigError, ConfigSaveError
from forge.config.keys import delete_key, dotted_keys, has_key, leaf_values, set_key
from forge.config.paths import config_path, ensure_dir
from forge.config.settings import Settings, environment_values, settings_sources
from forge.config.yaml_file import line_of_key, parse_config_text, read_config_text

if TYPE_CHECKING:
    import asyncio

API_KEY = "llm.api_key"
SUMMARIZATION_MODEL_KEY = "llm.summarization_model"
SAVED_FILE_HEADER = (
    "# Forge settings, written by Forge (comments are not kept; see config.example.yaml).\n"
)


@dataclass
class LoadResult:
    """The outcome of reading the config: usable settings, plus what went wrong if anything.

    `env_keys` holds the dotted keys whose value came from the environment; `file_data` is the
    file's raw mapping (empty when the file is missing or invalid), kept so a save preserves
    keys Forge does not know; it may hold the API key in clear, so `repr` leaves it out.
    """

    settings: Settings
    path: Path
    error: ConfigError | None
    env_keys: frozenset[str]
    file_data: dict[str, Any] = field(repr=False)


def content_digest(content: bytes | None) -> str:
    """A digest that tells two versions of the file apart (a missing file has its own)."""
    if content is None:
        return "missing"
    return hashlib.sha256(content).hexdigest()


def load_settings(path: Path | None = None) -> LoadResult:
    """Read settings from `path` (default `config_path()`) layered under the environment.

    Never raises for a bad file or a bad environment value: the result then holds the best
    usable settings and `error`. The file is only read.
    """
    path = path if path is not None else config_path()
    env_error: ConfigError | None = None
    try:
        env_keys = frozenset(dotted_keys(environment_values()))
    except SettingsError as error:
        env_keys = frozenset()
        env_error = ConfigError(path, _settings_error_message(error), source="environment")

    text: str | None = None
    file_data: dict[str, Any] = {}
    try:
        text = read_config_text(path)
        if text is not None:
            file_data = parse_config_text(text, path)
    except ConfigError as error:
        return LoadResult(_fallback({}, prefer_environment=True), path, error, env_keys, {})

    try:
        return LoadResult(_build(file_data), path, env_error, env_keys, file_data)
    except ValidationError as error:
        config_error = _config_error_from_validation(error, path, text or "", env_keys)
    except SettingsError as error:
        config_error = ConfigError(path, _settings_error_message(error), source="environment")
    # Drop whichever source holds the bad value and keep the other.
    settings = _fallback(file_data, prefer_environment=config_error.source == "file")
    return LoadResult(settings, path, config_error, env_keys, file_data)


def _build(file_data: Mapping[str, Any], *, include_environment: bool = True) -> Settings:
    with settings_sources(file_data, include_environment=include_environment):
        return Settings()


def _fallback(file_data: Mapping[str, Any], *, prefer_environment: bool) -> Settings:
    """The best settings that validate: (file or env) layered on defaults, else defaults."""
    try:
        if prefer_environment:
            return _build({}, include_environment=True)
        return _build(file_data, include_environment=False)
    except (ValidationError, SettingsError):
        return _build({}, include_environment=False)


def _settings_error_message(error: SettingsError) -> str:
    # pydantic-settings names the field and source in its message, never the value.
    return str(error).split("\n", 1)[0]


def _config_error_from_validation(
    error: ValidationError, path: Path, text: str, env_keys: frozenset[str]
) -> ConfigError:
    """One ConfigError for the first problem, with every problem listed in `details`."""
    problems: list[ConfigError] = []
    for item in error.errors(include_input=False, include_url=False):
        location = _field_location(item["loc"])
        key = ".".join(str(part) for part in location) or None
        context = item.get("ctx") or {}
        message = str(context["error"]) if item["type"] == "value_error" else item["msg"]
        from_environment = key is not None and _came_from_environment(key, env_keys)
        if from_environment:
            problems.append(ConfigError(path, message, key=key, source="environment"))
        else:
            line = line_of_key(text, location) if text else None
            problems.append(ConfigError(path, message, line=line, key=key))
    first = problems[0]
    return ConfigError(
        path,
        first.message,
        line=first.line,
        key=first.key,
        source=first.source,
        details=tuple(str(problem) for problem in problems),
    )


def _field_location(location: Sequence[str | int]) -> tuple[str | int, ...]:
    """The part of a pydantic error location that names settings, not validator internals.

    Unions and annotated validators add tags such as "int" or "function-after[...]"; they are
    dropped by walking the settings models and keeping only real field names and list indexes.
    """
    kept: list[str | int] = []
    model: Any = Settings
    for part in location:
        fields = getattr(model, "model_fields", None)
        if isinstance(part, str) and fields is not None and part in fields:
            kept.append(part)
            annotation = fields[part].annotation
            model = annotation if isinstance(annotation, type) else None
        elif isinstance(part, int) and kept:
            kept.append(part)
        else:
            continue
    return tuple(kept)


def _came_from_environment(key: str, env_keys: frozenset[str]) -> bool:
    return any(
        key == env_key or env_key.startswith(f"{key}.") or key.startswith(f"{env_key}.")
        for env_key in env_keys
    )


def mask_secret(value: str) -> str:
    """A secret safe to show: at most its last 4 characters, fewer for short ones.

    `sk-proj-abcdef0123456789wxyz` -> `sk-…wxyz`; an empty value -> `(not set)`.
    """
    if not value:
        return "(not set)"
    visible = min(4, len(value) // 4)
    prefix = "sk-" if value.startswith("sk-") and len(value) >= 12 else ""
    return f"{prefix}…{value[-visible:] if visible else ''}"


def save_settings(
    settings: Settings, previous: LoadResult, changed_keys: set[str] | None = None
) -> None:
    """Write `settings` to `previous.path` atomically (mode 0600, directory 0700).

    Starts from `previous.file_data`, so unknown keys survive. A value is written when it
    differs from its default or was already in the file; a key in `previous.env_keys` is left
    as the file had it unless it is in `changed_keys`; an empty `llm.summarization_model` is
    removed; `llm.api_key` is written only when in `changed_keys` or already in the file.
    Raises ConfigSaveError, leaving the old file intact, when the previous load found the
    file invalid, when the file changed on disk since that load, or when writing fails.
    """
    write_settings(settings, previous, changed_keys)


def write_settings(
    settings: Settings, previous: LoadResult, changed_keys: set[str] | None = None
) -> bytes:
    """`save_settings`, returning the exact bytes written (for the watcher to recognise)."""
    path = previous.path
    if previous.error is not None and previous.error.source == "file":
        raise ConfigSaveError(
            path, f"the file has an error ({previous.error}); fix it by hand first"
        )
    _refuse_if_changed_on_disk(previous)
    data = _merged_file_data(settings, previous, changed_keys or set())
    rendered = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
    content = (SAVED_FILE_HEADER + (rendered if data else "")).encode("utf-8")
    # Write through a symlink (dotfile managers) instead of replacing the link with a file.
    target = path.resolve() if path.is_symlink() else path
    try:
        ensure_dir(target.parent)
        atomic_write_bytes(target, content, mode=0o600)
    except OSError as error:
        raise ConfigSaveError(path, error.strerror or str(error)) from error
    return content


def _refuse_if_changed_on_disk(previous: LoadResult) -> None:
    """Saving over edits made since the load would silently drop them, so refuse instead."""
    try:
        text = read_config_text(previous.path)
        current = parse_config_text(text, previous.path) if text is not None else None
    except ConfigError as error:
        raise ConfigSaveError(
            previous.path, f"the file on disk is now invalid ({error}); fix it by hand first"
        ) from None
    if current is not None and current != previous.file_data:
        raise ConfigSaveError(
            previous.path, "the file changed on disk since it was loaded; reload and try again"
        )


def _merged_file_data(
    settings: Settings, previous: LoadResult, changed_keys: set[str]
) -> dict[str, Any]:
    data = copy.deepcopy(previous.file_data)
    defaults = leaf_values(_build({}, include_environment=False))
    for key, value in leaf_values(settings).items():
        in_file = has_key(data, key)
        if key in previous.env_keys and key not in changed_keys:
            continue  # the environment supplied it; the file keeps whatever it had
        if key == SUMMARIZATION_MODEL_KEY and not str(value).strip():
            delete_key(data, key)
        elif key == API_KEY:
            if not value:
                delete_key(data, key)
            elif key in changed_keys or in_file:
                set_key(data, key, value)
        elif in_file or value != defaults.get(key):
            set_key(data, key, value)
    return data


class ConfigStore:
    """One config file: its path, the last load, and the content Forge itself last wrote.

    `current` loads on first use. `save` writes, remembers the written content (so `watch` can
    skip the change it causes) and reloads.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else config_path()
        self._current: LoadResult | None = None
        self.last_written_digest: str | None = None

    @property
    def current(self) -> LoadResult:
        """The latest load (loading now if nothing was loaded yet)."""
        if self._current is None:
            return self.load()
        return self._current

    def load(self) -> LoadResult:
        """Read the file again and make the result `current`."""
        self._current = load_settings(self.path)
        return self._current

    def save(self, settings: Settings, changed_keys: set[str] | None = None) -> LoadResult:
        """Save (see `save_settings`) against `current`, then reload; returns the new load."""
        content = write_settings(settings, self.current, changed_keys)
        self.last_written_digest = content_digest(content)
        return self.load()

    async def watch(
        self,
        on_change: Callable[[LoadResult], Awaitable[None] | None],
        stop_event: asyncio.Event | None = None,
    ) -> None:
        """Watch the file; on an outside change, reload, update `current`, call `on_change`."""
        from forge.config.watcher import watch_config

        async def _accept(result: LoadResult) -> None:
            self._current = result
            outcome = on_change(result)
            if outcome is not None:
                await outcome

        await watch_config(
            self.path,
            _accept,
            stop_event,
            own_write_digest=lambda: self.last_written_digest,
        )
