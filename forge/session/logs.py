"""Forge's log file: `$XDG_STATE_HOME/forge/forge.log`, rotated, with secrets masked.

Nothing is configured at import. A client (headless run, the TUI) calls
`configure_file_logging` once at start-up with the secrets it knows.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from logging.handlers import RotatingFileHandler
from pathlib import Path

from forge.config.ephemeral import is_ephemeral
from forge.config.paths import ensure_dir, log_path
from forge.config.secrets import redact

MAX_LOG_BYTES = 2_000_000
LOG_BACKUPS = 3
MASK = "***"


class SecretMaskingFormatter(logging.Formatter):
    """Formats records, then replaces every secret — those given and every one the process
    knows of (`forge.config.secrets`) — with `***`."""

    def __init__(self, secrets: Sequence[str]) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self.secrets = tuple(secret for secret in secrets if secret)

    def format(self, record: logging.LogRecord) -> str:
        """The formatted record with secrets masked (tracebacks included)."""
        return redact(super().format(record), MASK, self.secrets)


def configure_file_logging(
    secrets: Sequence[str] = (), *, level: int = logging.INFO, path: Path | None = None
) -> Path:
    """Send the `forge` loggers to the rotating log file (once; later calls update the
    secrets). Returns the log file's path."""
    target = path if path is not None else log_path()
    root = logging.getLogger("forge")
    if is_ephemeral():  # `forge run --ephemeral`: no log file
        return target
    for handler in root.handlers:
        if isinstance(handler, RotatingFileHandler) and Path(handler.baseFilename) == target:
            handler.setFormatter(SecretMaskingFormatter(secrets))
            return target
    ensure_dir(target.parent)
    handler = RotatingFileHandler(
        target, maxBytes=MAX_LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
    )
    handler.setFormatter(SecretMaskingFormatter(secrets))
    root.addHandler(handler)
    root.setLevel(level)
    return target
