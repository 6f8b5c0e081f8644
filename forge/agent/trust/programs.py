"""What a workspace defines that Forge would start: the programs of one file, for people (the
trust dialog, `forge trust`, `forge run`'s warning) and as a fingerprint (the trust store)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True, slots=True)
class WorkspaceProgram:
    """One program a workspace file defines (an MCP server entry today)."""

    name: str
    """The entry's name in its file ("github")."""
    command: str
    """What would run, as the user should read it: the command line, or "connect to URL"."""
    variables: tuple[str, ...] = ()
    """The `${VAR}` references it would receive (expanded only when trusted and allowed)."""


@dataclass(frozen=True, slots=True)
class ProgramSource:
    """One workspace file that defines programs, as it is now."""

    file: str
    """The file, relative to the workspace, POSIX style (".forge/mcp.yaml")."""
    programs: tuple[WorkspaceProgram, ...]
    """Every program it defines (none: there is nothing to trust)."""
    fingerprint: str
    """Changes whenever any definition changes (`fingerprint_of` the parsed definitions)."""


def fingerprint_of(definitions: Any) -> str:
    """A digest of parsed definitions (YAML/JSON data): the same data, the same digest,
    whatever the formatting, comments or key order of the file."""
    canonical = json.dumps(definitions, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def printable(text: str) -> str:
    """`text` with control characters shown as `\\xNN`: a hostile file's command line must
    not drive the terminal it is shown on."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def program_digest(program: WorkspaceProgram) -> str:
    """A short digest of what `program` runs: the trust store keeps it (not the command line,
    which may hold a token) to tell a later dialog which definitions are new or changed."""
    return hashlib.sha256(program.command.encode("utf-8")).hexdigest()[:16]
