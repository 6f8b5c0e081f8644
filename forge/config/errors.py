"""Errors of the config layer. Messages name the file, line and key, never a value, so a
secret typed in the wrong place cannot leak through an error message."""

from __future__ import annotations

from pathlib import Path


class ConfigError(Exception):
    """A config file (or an environment variable) that could not be used.

    `line` is 1-based and `key` is dotted (`context.warning_threshold`); either may be None when
    unknown. `source` is "file" or "environment". `details` holds one line per problem found
    (the first is this error itself), for `forge config validate`.
    """

    def __init__(
        self,
        path: Path,
        message: str,
        *,
        line: int | None = None,
        key: str | None = None,
        source: str = "file",
        details: tuple[str, ...] = (),
    ) -> None:
        self.path = path
        self.message = message
        self.line = line
        self.key = key
        self.source = source
        super().__init__(self._render())
        self.details = details or (self._render(),)

    def _render(self) -> str:
        location = self.path.name if self.source == "file" else "environment"
        if self.line is not None:
            location = f"{location}:{self.line}"
        if self.key:
            return f"{location}: {self.key}: {self.message}"
        return f"{location}: {self.message}"


class ConfigSaveError(Exception):
    """The config could not be saved; the file on disk is unchanged. `str()` says why."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"could not save {path}: {reason}")
