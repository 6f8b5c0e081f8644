"""Where Forge keeps its files, following the XDG base directory spec.

Every function only computes a path; nothing here touches the disk except `ensure_dir`, so
importing this module has no side effects.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_DIRECTORY_NAME = "forge"
CONFIG_FILE_NAME = "config.yaml"
PRIVATE_DIRECTORY_MODE = 0o700


def _xdg_base(variable: str, fallback: str) -> Path:
    """The XDG base directory named by `variable`, or `~/<fallback>`.

    The spec says a relative value is invalid and must be ignored, so only absolute ones count.
    """
    value = os.environ.get(variable, "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / fallback


def config_path() -> Path:
    """The config file: `$FORGE_CONFIG` if set, else `$XDG_CONFIG_HOME/forge/config.yaml`."""
    override = os.environ.get("FORGE_CONFIG", "")
    if override:
        return Path(override).expanduser()
    return _xdg_base("XDG_CONFIG_HOME", ".config") / APP_DIRECTORY_NAME / CONFIG_FILE_NAME


def data_dir() -> Path:
    """Forge's data directory: `$XDG_DATA_HOME/forge` (default `~/.local/share/forge`)."""
    return _xdg_base("XDG_DATA_HOME", ".local/share") / APP_DIRECTORY_NAME


def state_dir() -> Path:
    """Forge's state directory: `$XDG_STATE_HOME/forge` (default `~/.local/state/forge`)."""
    return _xdg_base("XDG_STATE_HOME", ".local/state") / APP_DIRECTORY_NAME


def cache_dir() -> Path:
    """Forge's cache directory: `$XDG_CACHE_HOME/forge` (default `~/.cache/forge`)."""
    return _xdg_base("XDG_CACHE_HOME", ".cache") / APP_DIRECTORY_NAME


def sessions_dir() -> Path:
    """Where session logs live: `data_dir()/sessions`."""
    return data_dir() / "sessions"


def log_path() -> Path:
    """The log file: `state_dir()/forge.log`."""
    return state_dir() / "forge.log"


class UnusableDirectoryError(NotADirectoryError):
    """A directory Forge needs cannot exist because a regular file stands in its way.

    `str()` is one line naming the directory, the file in the way and the XDG variable
    that points there, if any.
    """

    def __init__(self, directory: Path, blocker: Path) -> None:
        self.directory = directory
        self.blocker = blocker
        variable = _variable_pointing_at(blocker)
        named = f" (${variable})" if variable else ""
        super().__init__(
            f"cannot use {directory} as a directory: {blocker}{named} is a regular file"
        )


def _variable_pointing_at(path: Path) -> str | None:
    for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        value = os.environ.get(variable, "")
        if value and os.path.isabs(value) and Path(value) == path:
            return variable
    return None


def file_in_the_way(directory: Path) -> Path | None:
    """`directory` or its nearest existing ancestor when that is not a directory, else None."""
    for candidate in (directory, *directory.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


def unusable_directories() -> list[UnusableDirectoryError]:
    """The problems with the data and state directories (sessions, logs), each one line.

    Checked before the TUI or `forge run` starts, so a regular file where `$XDG_DATA_HOME` or
    `$XDG_STATE_HOME` should be is one clear line instead of a traceback mid-run. (The config
    directory is the config loader's to report, see `forge.config.yaml_file`.)
    """
    problems = []
    for directory in (data_dir(), state_dir()):
        blocker = file_in_the_way(directory)
        if blocker is not None:
            problems.append(UnusableDirectoryError(directory, blocker))
    return problems


def ensure_dir(path: Path) -> Path:
    """Create `path` (and missing parents) if absent; a directory this creates gets mode 0o700.

    Returns `path`. An existing directory keeps its mode: it may be shared on purpose. Raises
    UnusableDirectoryError (an OSError) when a regular file stands where a directory must be.
    """
    if not path.is_dir():
        blocker = file_in_the_way(path)
        if blocker is not None:
            raise UnusableDirectoryError(path, blocker)
        path.mkdir(mode=PRIVATE_DIRECTORY_MODE, parents=True, exist_ok=True)
        # mkdir's mode is masked by the umask; set it exactly.
        os.chmod(path, PRIVATE_DIRECTORY_MODE)
    return path
