"""Loading and saving the YAML config file.

`load_settings` never raises for a bad file or environment: a value that fails validation is
left out (the layer below applies: the file under an environment variable, the default under
the file) and reported in `LoadResult.problems`; a file that cannot be parsed is left out as a
whole. The file is only read. `save_settings` edits the file in place (comments and key order
kept), atomically, under a lock, and only if the file is still the version that was loaded.
See ADR 0002 and ADR 0022.
"""

from __future__ import annotations

import copy
import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge.config.atomic import atomic_write_bytes
from forge.config.environment import EnvironmentReading, read_environment
from forge.config.errors import ConfigChangedError, ConfigError, ConfigSaveError, ConfigWarning
from forge.config.file_lock import locked
from forge.config.keys import delete_key, has_key, leaf_values, set_key
from forge.config.known_keys import unknown_keys
from forge.config.partial_build import build, build_keeping_valid
from forge.config.paths import config_path, ensure_dir
from forge.config.round_trip import SAVED_FILE_HEADER, RoundTripError, render
from forge.config.settings import ENV_NESTED_DELIMITER, ENV_PREFIX, Settings
from forge.config.yaml_file import (
    decode_config,
    line_of_key,
    parse_config_text,
    read_config_bytes,
)

logger = logging.getLogger(__name__)
# Problems are also returned in the LoadResult and shown by the caller; before the log file is
# set up, Python's last-resort handler would print them a second time on stderr.
logger.addHandler(logging.NullHandler())

API_KEY = "llm.api_key"
SUMMARIZATION_API_KEY = "llm.summarization_api_key"
SUMMARIZATION_MODEL_KEY = "llm.summarization_model"
MCP_SERVERS_KEY = "mcp_servers"
__all__ = [
    "API_KEY",
    "SAVED_FILE_HEADER",
    "SUMMARIZATION_MODEL_KEY",
    "ConfigStore",
    "LoadResult",
    "content_digest",
    "load_settings",
    "mask_secret",
    "save_settings",
    "write_settings",
]


@dataclass
class LoadResult:
    """The outcome of reading the config: the settings to run with, and what went wrong.

    `settings` are the values to run with: every valid value of the file and the environment.
    `problems` lists each value left out (file: key, line and reason; environment: the
    variable), or the whole file when it could not be parsed, the file's first; `error` is the
    first of them (or None; its `source` is "file" whenever the file has a problem) and its
    `details` list them all. `warnings` are things used anyway but probably
    mistaken (an unknown key, with a "did you mean"). `save_blocked` says why saving over the
    file is refused (None when saving is allowed). `version` is the digest of the bytes loaded,
    the base a save compares against. `env_keys` holds the dotted keys the environment
    supplied. `file_data` is the file's raw mapping (empty when missing or unparsable), kept so
    a save preserves keys Forge does not know; it may hold the API key in clear, so `repr`
    leaves it out.
    """

    settings: Settings
    path: Path
    error: ConfigError | None
    env_keys: frozenset[str]
    file_data: dict[str, Any] = field(repr=False)
    problems: tuple[ConfigError, ...] = ()
    warnings: tuple[ConfigWarning, ...] = ()
    save_blocked: str | None = None
    version: str = "missing"

    @property
    def file_problems(self) -> tuple[ConfigError, ...]:
        """The problems found in the file (not in the environment)."""
        return tuple(problem for problem in self.problems if problem.source == "file")


def content_digest(content: bytes | None) -> str:
    """A digest that tells two versions of the file apart (a missing file has its own)."""
    if content is None:
        return "missing"
    return hashlib.sha256(content).hexdigest()


def load_settings(path: Path | None = None) -> LoadResult:
    """Read settings from `path` (default `config_path()`) layered under the environment.

    Never raises for a bad file or a bad environment value; see `LoadResult`. The file is only
    read. Problems and warnings are also logged.
    """
    path = path if path is not None else config_path()
    environment = read_environment()
    content: bytes | None = None
    text = ""
    file_data: dict[str, Any] = {}
    unreadable: ConfigError | None = None
    try:
        content = read_config_bytes(path)
        if content is not None:
            text = decode_config(content, path)
            file_data = parse_config_text(text, path)
    except ConfigError as unusable:
        unreadable = unusable
        file_data = {}
    built = build_keeping_valid(file_data, environment, path, text)
    # File problems first, so that `error.source == "file"` whenever the file has one.
    problems = (
        ((unreadable,) if unreadable else ())
        + tuple(problem for problem in built.problems if problem.source == "file")
        + tuple(problem for problem in built.problems if problem.source != "file")
    )
    warnings = _warnings(file_data, text, path, environment)
    for problem in problems:
        logger.warning("config: %s", problem)
    for warning in warnings:
        logger.warning("config: %s", warning)
    error: ConfigError | None = None
    if problems:
        first = problems[0]
        error = ConfigError(
            path,
            first.message,
            line=first.line,
            key=first.key,
            source=first.source,
            variable=first.variable,
            details=tuple(str(problem) for problem in problems),
        )
    save_blocked = None
    if unreadable is not None:
        save_blocked = (
            f"{unreadable} — Forge will not overwrite a file it cannot read; fix it by hand"
        )
    return LoadResult(
        settings=built.settings,
        path=path,
        error=error,
        env_keys=environment.keys,
        file_data=file_data,
        problems=problems,
        warnings=warnings,
        save_blocked=save_blocked,
        version=content_digest(content),
    )


def _warnings(
    file_data: dict[str, Any], text: str, path: Path, environment: EnvironmentReading
) -> tuple[ConfigWarning, ...]:
    """An unknown key in the file or the environment, with a "did you mean"."""
    warnings: list[ConfigWarning] = []
    for location, suggestion in unknown_keys(Settings, file_data):
        key = ".".join(location)
        hint = f"; did you mean {suggestion}?" if suggestion else " (kept in the file)"
        warnings.append(
            ConfigWarning(
                path, f"unknown key, ignored{hint}", line=line_of_key(text, location), key=key
            )
        )
    for variable, keys in environment.keys_by_variable.items():
        nested: dict[str, Any] = {}
        for key in keys:
            set_key(nested, key, None)
        for location, suggestion in unknown_keys(Settings, nested):
            hint = f"; did you mean {_variable_of(suggestion)}?" if suggestion else ""
            warnings.append(
                ConfigWarning(
                    path,
                    f"unknown setting, ignored{hint}",
                    key=".".join(location),
                    source="environment",
                    variable=variable,
                )
            )
    return tuple(warnings)


def _variable_of(key: str) -> str:
    return ENV_PREFIX + key.upper().replace(".", ENV_NESTED_DELIMITER)


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
    """Write `settings` to `previous.path`: in place, atomically, mode 0600, under a lock.

    Starts from `previous.file_data`, so unknown keys survive, and edits the file's text so
    its comments and key order survive. A value is written when it differs from its default or
    was already in the file; a key in `previous.env_keys` is left as the file had it unless it
    is in `changed_keys`; an empty `llm.summarization_model` is removed; `llm.api_key` is
    written only when in `changed_keys` or already in the file. A value the file held but that
    was invalid is replaced by the value in `settings`. Raises ConfigChangedError when the file
    on disk is no longer the version `previous` loaded (checked under the lock, so of several
    processes saving over one version exactly one wins), and ConfigSaveError when saving is
    blocked (`previous.save_blocked`) or writing fails; the old file is then intact.
    """
    write_settings(settings, previous, changed_keys)


def write_settings(
    settings: Settings, previous: LoadResult, changed_keys: set[str] | None = None
) -> bytes:
    """`save_settings`, returning the exact bytes written (for the watcher to recognise)."""
    path = previous.path
    if previous.save_blocked is not None:
        raise ConfigSaveError(path, previous.save_blocked)
    data = _merged_file_data(settings, previous, changed_keys or set())
    # Write through a symlink (dotfile managers) instead of replacing the link with a file.
    target = path.resolve() if path.is_symlink() else path
    try:
        ensure_dir(target.parent)
        with locked(target):
            current = _read_for_save(target, path)
            if content_digest(current) != previous.version:
                raise ConfigChangedError(path)
            old_text = None if current is None else decode_config(current, path)
            content = render(old_text, previous.file_data, data).encode("utf-8")
            atomic_write_bytes(target, content, mode=0o600)
    except ConfigError as error:
        raise ConfigSaveError(path, str(error)) from None
    except RoundTripError as error:
        raise ConfigSaveError(path, f"the file could not be edited in place ({error})") from None
    except OSError as error:
        raise ConfigSaveError(path, error.strerror or str(error)) from error
    return content


def _read_for_save(target: Path, path: Path) -> bytes | None:
    try:
        return read_config_bytes(target)
    except ConfigError as error:
        raise ConfigSaveError(path, f"the file on disk cannot be read ({error})") from None


def _merged_file_data(
    settings: Settings, previous: LoadResult, changed_keys: set[str]
) -> dict[str, Any]:
    data = copy.deepcopy(previous.file_data)
    defaults = leaf_values(build({}, None))
    for key, value in leaf_values(settings).items():
        in_file = has_key(data, key)
        if key == MCP_SERVERS_KEY:
            # Entries stay as written (`${VAR}`, explicit defaults, even one left out as
            # invalid); only the fields named in `changed_keys` are written.
            _write_server_changes(data, settings, changed_keys)
            continue
        if key in previous.env_keys and key not in changed_keys:
            continue  # the environment supplied it; the file keeps whatever it had
        if key == SUMMARIZATION_MODEL_KEY and not str(value).strip():
            delete_key(data, key)
        elif key in (API_KEY, SUMMARIZATION_API_KEY):
            if not value:
                delete_key(data, key)
            elif key in changed_keys or in_file:
                set_key(data, key, value)
        elif in_file or value != defaults.get(key):
            set_key(data, key, value)
    return data


def _write_server_changes(data: dict[str, Any], settings: Settings, changed_keys: set[str]) -> None:
    """Set each changed `mcp_servers.NAME.FIELD` from `settings` in the file's entry NAME
    (a name may hold dots: the field is the last part)."""
    prefix = f"{MCP_SERVERS_KEY}."
    for key in changed_keys:
        if not key.startswith(prefix):
            continue
        name, _, field_name = key.removeprefix(prefix).rpartition(".")
        server = settings.mcp_servers.get(name)
        if server is None or field_name not in type(server).model_fields:
            continue
        servers = data.setdefault(MCP_SERVERS_KEY, {})
        entry = servers.get(name) if isinstance(servers, dict) else None
        if isinstance(entry, dict):
            entry[field_name] = getattr(server, field_name)


class ConfigStore:
    """One config file: its path, the last load, and the content Forge itself last wrote.

    `current` loads on first use. `save` writes, remembers the written content (so the watcher,
    `forge.config.watcher.watch_store`, can skip the change it causes) and reloads.
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

    def accept(self, result: LoadResult) -> None:
        """Make `result` (a load done elsewhere, e.g. by the watcher) `current`."""
        self._current = result

    def save(self, settings: Settings, changed_keys: set[str] | None = None) -> LoadResult:
        """Save (see `save_settings`) against `current`, then reload; returns the new load."""
        content = write_settings(settings, self.current, changed_keys)
        self.last_written_digest = content_digest(content)
        return self.load()
