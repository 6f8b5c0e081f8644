"""Which confinement this machine offers (docs/adr/0053).

Bubblewrap (`bwrap`, the Debian package `bubblewrap`) is the one mechanism Forge drives: it is
found on PATH and tried once per process with the namespaces Forge uses (a user's kernel may
forbid unprivileged user namespaces, a container may forbid mounting /proc). Landlock is only
reported: without bubblewrap Forge does not confine (the ADR says which promises Landlock alone
could keep).
"""

from __future__ import annotations

import ctypes
import functools
import shutil
import subprocess
import sys
from dataclasses import dataclass

PROBE_TIMEOUT_SECONDS = 10.0
"""How long the one trial run of bubblewrap may take."""
BUBBLEWRAP = "bubblewrap"
"""The mechanism's name in `/sandbox`, `forge sandbox --check` and `forge run`'s record."""
NO_MECHANISM = "none"
_LANDLOCK_CREATE_RULESET_VERSION = 1
_SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on x86-64 and arm64


@dataclass(frozen=True)
class Mechanism:
    """What was found: `name` is "bubblewrap" or "none"; `path` the bwrap executable;
    `problem` why bubblewrap cannot run ("" when it can)."""

    name: str
    path: str = ""
    problem: str = ""


@functools.cache
def find_mechanism(program: str = "bwrap") -> Mechanism:
    """Bubblewrap if `program` is on PATH and can create the namespaces Forge uses; else "none"
    with the reason. Tried once per process and program."""
    if not sys.platform.startswith("linux"):
        return Mechanism(NO_MECHANISM, problem=f"no sandbox for {sys.platform} yet")
    path = shutil.which(program)
    if path is None:
        return Mechanism(
            NO_MECHANISM,
            problem=f"bubblewrap is not installed ('{program}' is not on PATH; "
            "Debian/Ubuntu: apt-get install bubblewrap)",
        )
    trial = [
        path,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--unshare-pid",
        "--unshare-net",
        "--die-with-parent",
        "--", "/bin/true",
    ]  # fmt: skip
    try:
        finished = subprocess.run(
            trial,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return Mechanism(NO_MECHANISM, path, f"bubblewrap could not be run: {error}")
    if finished.returncode != 0:
        message = finished.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = message[-1] if message else f"exit code {finished.returncode}"
        return Mechanism(NO_MECHANISM, path, f"bubblewrap cannot create a sandbox here: {reason}")
    return Mechanism(BUBBLEWRAP, path)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0 when it has none or it is disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        version = libc.syscall(
            _SYS_LANDLOCK_CREATE_RULESET, None, 0, _LANDLOCK_CREATE_RULESET_VERSION
        )
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)
