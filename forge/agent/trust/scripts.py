"""The workspace files a trusted definition's command line names, fingerprinted with it
(issue 34, docs/adr/0047).

Trusting `.forge/hooks.json` that runs `sh ./hook.sh` trusted the line, not `hook.sh`: new
content in the script (a `git pull`) ran at the next tool call without a question. So every
word of a program's command line that names a regular file inside the workspace (`./hook.sh`,
`scripts/server.py`, `--config=tools/x.toml`) is hashed, and the digests join the source's
fingerprint: a changed script is a changed definition, asked about again. Not covered: what a
script reads or runs in turn (a module it imports, a file it sources), a program found on
`PATH`, and anything outside the workspace. The trust question shows what runs; it cannot
read the code for the user.
"""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path

from forge.agent.trust.programs import ProgramSource, fingerprint_of

MAX_SCRIPT_BYTES = 16 * 1024 * 1024
"""A larger file is fingerprinted by its size and first 16 MiB (still a change detector)."""


def _words(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:  # an unbalanced quote: the plain words still name files
        words = command.split()
    named = []
    for word in words:
        named.append(word)
        if "=" in word:  # --config=tools/x.toml
            named.append(word.split("=", 1)[1])
    return named


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        digest.update(handle.read(MAX_SCRIPT_BYTES))
    return f"sha256:{digest.hexdigest()}:{path.stat().st_size}"


def named_scripts(source: ProgramSource, workspace: Path) -> dict[str, str]:
    """Each workspace file a program of `source` names, relative path → content digest."""
    scripts: dict[str, str] = {}
    for program in source.programs:
        for word in _words(program.command):
            if not word or word.startswith("-") or "://" in word:
                continue
            try:
                path = (workspace / word).resolve()
                if not path.is_relative_to(workspace) or not path.is_file():
                    continue
                scripts[path.relative_to(workspace).as_posix()] = _digest(path)
            except (OSError, ValueError):
                continue
    return scripts


def fingerprint_with_scripts(source: ProgramSource, workspace: Path) -> str:
    """`source`'s fingerprint, covering the scripts it names too (unchanged when it names
    none, so a trust given before this covered nothing it could miss)."""
    scripts = named_scripts(source, workspace)
    if not scripts:
        return source.fingerprint
    return fingerprint_of({"definitions": source.fingerprint, "scripts": scripts})
