"""Print the `uv pip install` options that make uv resolve as this machine's pip does.

uv reads neither pip's configuration files nor its `PIP_*` variables, so `make` asks pip
(`python -m pip config list`: the files and the environment, merged) and hands uv the same
index, extra indexes, find-links folders and constraint files, and pip's way of choosing
among indexes. Used by the Makefile's install step (docs/adr/0052).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from urllib.parse import urlparse

OPTIONS = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
}
"""pip's setting -> uv's option (each value of a space-separated list gets its own)."""

_LINE = re.compile(r"^(?P<scope>[^.]*)\.(?P<key>[a-z-]+)='(?P<value>.*)'$")


def pip_settings(config_list: str) -> dict[str, list[str]]:
    """The values of `OPTIONS`' settings in `pip config list` output; the environment's
    (`:env:`) win over the files', as they do for pip."""
    found: dict[str, tuple[bool, list[str]]] = {}
    for line in config_list.splitlines():
        match = _LINE.match(line.strip())
        if match is None or match["key"] not in OPTIONS:
            continue
        from_env = match["scope"] == ":env:"
        earlier = found.get(match["key"])
        if earlier is not None and earlier[0] and not from_env:
            continue
        found[match["key"]] = (from_env, match["value"].split())
    return {key: values for key, (_, values) in found.items()}


def usable(value: str) -> bool:
    """A local folder or file:// index that does not exist is skipped (pip only warns)."""
    from pathlib import Path

    parsed = urlparse(value)
    if parsed.scheme == "file":
        return Path(parsed.path).exists()
    if not parsed.scheme:
        return Path(value).exists()
    return True


def uv_options(settings: dict[str, list[str]]) -> list[str]:
    """uv's options for `settings`, in `OPTIONS` order, after pip's way with several indexes:
    the best version from any of them (uv's default takes the first index that has the
    package at all, which resolves differently)."""
    options: list[str] = ["--index-strategy", "unsafe-best-match"]
    for key, option in OPTIONS.items():
        for value in settings.get(key, []):
            if usable(value):
                options += [option, value]
    return options


def main() -> int:
    try:
        listed = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0
    print(shlex.join(uv_options(pip_settings(listed))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
