"""Every secret Forge knows of, and the one redaction every artefact goes through.

Forge knows an API key from up to four places at once: the config file, `OPENAI_API_KEY`,
`ANTHROPIC_API_KEY` and `FORGE_LLM__API_KEY` (and a summarization key from the file or
`FORGE_LLM__SUMMARIZATION_API_KEY`). Only one of them is used (the environment wins), but any
of them can turn up in a command's output (`cat ~/.config/forge/config.yaml`, `env`), so
all of them are kept out of artefacts. Keys stay known for the life of the process: after a
settings change the old key is still masked, since output printed before the change may quote
it.

`KNOWN_SECRETS` is the process-wide set. Writers of artefacts — the session file, summary
files, the log, `forge run`'s output — call `redact` on what they write; clients add the
secrets of each settings load with `remember_settings_secrets`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from forge.config.errors import ConfigError
from forge.config.paths import config_path
from forge.config.settings import ENV_NESTED_DELIMITER, ENV_PREFIX, Settings
from forge.config.yaml_file import parse_config_text, read_config_text

REDACTED = "[redacted]"
"""What a secret becomes in files."""
MIN_SECRET_LENGTH = 4
"""Shorter values are not treated as secrets: masking every "ab" would garble artefacts."""
API_KEY_ENVIRONMENT_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    f"{ENV_PREFIX}LLM{ENV_NESTED_DELIMITER}API_KEY",
)
"""The environment variables that can hold Forge's API key."""


class SecretSet:
    """Secrets to mask, added over time, never removed (except by `clear`, for tests)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: tuple[str, ...] = ()

    def add(self, values: Iterable[str]) -> None:
        """Know these values from now on (empty and too short values are ignored)."""
        with self._lock:
            known = set(self._values)
            known.update(value for value in values if len(value) >= MIN_SECRET_LENGTH)
            # Longest first: a key that contains another is masked whole.
            self._values = tuple(sorted(known, key=lambda value: (-len(value), value)))

    def values(self) -> tuple[str, ...]:
        """Every secret known, longest first."""
        return self._values

    def redact(self, text: str, mask: str = REDACTED, extra: Iterable[str] = ()) -> str:
        """`text` with every known secret (and every value of `extra`) replaced by `mask`."""
        values = self._values
        more = [value for value in extra if value and value not in values]
        for secret in [*sorted(more, key=len, reverse=True), *values]:
            if secret in text:
                text = text.replace(secret, mask)
        return text

    def clear(self) -> None:
        """Forget every secret (tests start from nothing)."""
        with self._lock:
            self._values = ()


KNOWN_SECRETS = SecretSet()
"""The secrets this process knows of."""


class StreamRedactor:
    """`redact` for text that arrives in pieces (a command's output): a secret split between
    two pieces is masked too. The end of a piece that could begin a known secret is held back
    until the next piece or `flush`; everything else passes at once. The secrets are read at
    every piece, so one learnt mid-stream is masked from then on."""

    def __init__(self, secrets: SecretSet | None = None, mask: str = REDACTED) -> None:
        self._secrets = secrets if secrets is not None else KNOWN_SECRETS
        self._mask = mask
        self._held = ""

    def feed(self, piece: str) -> str:
        """The masked text of `piece` that can be passed on now."""
        text = self._secrets.redact(self._held + piece, self._mask)
        hold = _secret_prefix_at_end(text, self._secrets.values())
        self._held = text[len(text) - hold :] if hold else ""
        return text[: len(text) - hold]

    def flush(self) -> str:
        """Whatever is still held (the stream ended): it held no whole secret."""
        held, self._held = self._held, ""
        return held


def _secret_prefix_at_end(text: str, secrets: Iterable[str]) -> int:
    """The length of the longest end of `text` that is the start of a secret (0 if none)."""
    hold = 0
    for secret in secrets:
        first = secret[0]
        position = text.find(first, max(0, len(text) - len(secret) + 1))
        while position != -1 and len(text) - position > hold:
            if secret.startswith(text[position:]):
                hold = len(text) - position
                break
            position = text.find(first, position + 1)
    return hold


def redact(text: str, mask: str = REDACTED, extra: Iterable[str] = ()) -> str:
    """`text` with every secret this process knows of (and `extra`) replaced by `mask`."""
    return KNOWN_SECRETS.redact(text, mask, extra)


def config_file_data() -> dict[str, Any]:
    """The config file's raw mapping as it is on disk now (empty if missing or unreadable)."""
    path = config_path()
    try:
        text = read_config_text(path)
        return parse_config_text(text, path) if text is not None else {}
    except (ConfigError, OSError):
        return {}


def settings_secrets(settings: Settings, file_data: Mapping[str, Any] | None = None) -> list[str]:
    """The API keys of a settings load: the effective one, the environment's, and the file's
    even when the environment overrides it (`file_data` is the file's raw mapping; None reads
    the config file now)."""
    if file_data is None:
        file_data = config_file_data()
    values = [
        settings.llm.api_key.get_secret_value(),
        settings.llm.summarization_api_key.get_secret_value(),
    ]
    values.extend(os.environ.get(name, "") for name in API_KEY_ENVIRONMENT_VARIABLES)
    llm = file_data.get("llm")
    if isinstance(llm, Mapping):
        for name in ("api_key", "summarization_api_key"):
            file_key = llm.get(name)
            if isinstance(file_key, str):
                values.append(file_key)
    return sorted({value for value in values if value})


def remember_settings_secrets(
    settings: Settings, file_data: Mapping[str, Any] | None = None
) -> list[str]:
    """Add the keys of this settings load to `KNOWN_SECRETS`; returns every known secret."""
    KNOWN_SECRETS.add(settings_secrets(settings, file_data))
    return list(KNOWN_SECRETS.values())
