"""Errors of the config layer. Messages name the file, line, key or environment variable, never
a value, so a secret typed in the wrong place cannot leak through an error message."""

from __future__ import annotations

from pathlib import Path


class ConfigError(Exception):
    """A config file (or an environment variable) that could not be used.

    `line` is 1-based and `key` is dotted (`context.warning_threshold`); either may be None when
    unknown. `source` is "file" or "environment"; `variable` names the environment variable
    (`FORGE_CONTEXT__MAX_TOKENS`) when the source is the environment. `details` holds one line
    per problem found (the first is this error itself), for `forge config validate`.
    """

    def __init__(
        self,
        path: Path,
        message: str,
        *,
        line: int | None = None,
        key: str | None = None,
        source: str = "file",
        variable: str | None = None,
        details: tuple[str, ...] = (),
    ) -> None:
        self.path = path
        self.message = message
        self.line = line
        self.key = key
        self.source = source
        self.variable = variable
        super().__init__(self._render())
        self.details = details or (self._render(),)

    def _render(self) -> str:
        if self.source != "file":
            if self.variable:
                setting = f" ({self.key})" if self.key else ""
                return f"environment variable {self.variable}{setting}: {self.message}"
            location = "environment"
        else:
            location = self.path.name
        if self.line is not None:
            location = f"{location}:{self.line}"
        if self.key:
            return f"{location}: {self.key}: {self.message}"
        return f"{location}: {self.message}"


class ConfigWarning(ConfigError):
    """Something in the config that is used anyway but is probably a mistake, such as an
    unknown (misspelled) key. Same fields as ConfigError; never a reason to refuse the file."""


class ConfigSaveError(Exception):
    """The config could not be saved; the file on disk is unchanged. `str()` says why."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"could not save {path}: {reason}")


class ConfigChangedError(ConfigSaveError):
    """The save was refused because the file changed on disk after it was loaded (another
    editor, or another Forge saving at the same moment). Reload, then save again."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            path,
            "the file changed on disk since it was loaded (another program or another Forge "
            "saved it); reopen the settings to see the new values, then save again",
        )
