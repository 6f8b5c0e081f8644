"""A pids cgroup bounding how many processes one session's confined commands may have.

The tests and CI run as root, for whom the kernel ignores `RLIMIT_NPROC`, so the bound is a
cgroup: cgroup v2 when the pids controller is (or can be) enabled below Forge's own cgroup,
else the cgroup v1 pids hierarchy. Each confined command moves itself into the session's
cgroup between fork and exec (`move_self`), so nothing it starts escapes the count. Where
neither can be written (an unprivileged user without a delegated cgroup), `SessionPids.problem`
says why and commands run without the bound.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
from dataclasses import dataclass
from pathlib import Path

_counter = itertools.count(1)
CGROUP_PREFIX = "forge-sandbox-"
"""A session's cgroup: `forge-sandbox-PID-N`."""


@dataclass(frozen=True)
class _Mount:
    point: Path
    root: str


class SessionPids:
    """One session's pids cgroup; `start` creates it, `close` removes it."""

    def __init__(self, limit: int) -> None:
        """`limit`: processes the session's commands may have at once."""
        self.limit = limit
        self.directory: Path | None = None
        self.version = ""
        self.problem = ""
        self._procs_descriptor: int | None = None

    def start(self) -> None:
        """Create the cgroup (once); on failure `problem` says why."""
        if self.directory is not None or self.problem:
            return
        name = f"{CGROUP_PREFIX}{os.getpid()}-{next(_counter)}"
        errors: list[str] = []
        for version, parent in _candidate_parents():
            _remove_stale(parent)
            try:
                directory = parent / name
                if version == "v2":
                    _enable_pids_controller(parent)
                directory.mkdir(mode=0o755)
                try:
                    (directory / "pids.max").write_text(str(self.limit))
                    self._procs_descriptor = os.open(directory / "cgroup.procs", os.O_WRONLY)
                except OSError:
                    directory.rmdir()
                    raise
            except OSError as error:
                errors.append(f"cgroup {version} at {parent}: {error.strerror or error}")
                continue
            self.directory, self.version = directory, version
            return
        self.problem = "; ".join(errors) or "no pids cgroup hierarchy is mounted"

    @property
    def description(self) -> str:
        """E.g. "1024 processes (cgroup v2)", or why there is no bound."""
        if self.directory is not None:
            return f"{self.limit} processes (cgroup {self.version})"
        return f"no process limit ({self.problem})" if self.problem else "not started"

    def move_self(self) -> None:
        """Put the calling process in the cgroup (between fork and exec); nothing if none."""
        if self._procs_descriptor is not None:
            os.write(self._procs_descriptor, b"0")

    def close(self) -> None:
        """Kill what is left in the cgroup and remove it."""
        if self._procs_descriptor is not None:
            os.close(self._procs_descriptor)
            self._procs_descriptor = None
        directory, self.directory = self.directory, None
        if directory is None:
            return
        for _ in range(50):
            try:
                pids = (directory / "cgroup.procs").read_text().split()
            except OSError:
                break
            for pid in pids:
                with contextlib.suppress(OSError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            try:
                directory.rmdir()
                return
            except OSError:
                os.sched_yield()


def _remove_stale(parent: Path) -> None:
    """Remove the (empty) cgroups of Forge processes that are gone (killed with -9)."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            pid = entry.name.removeprefix(CGROUP_PREFIX).split("-", 1)[0]
            gone = pid.isdigit() and not Path(f"/proc/{pid}").exists()
            if entry.name.startswith(CGROUP_PREFIX) and gone:
                with contextlib.suppress(OSError):
                    entry.rmdir()


def _candidate_parents() -> list[tuple[str, Path]]:
    """Where a pids cgroup could go: Forge's own cgroup in the v2 hierarchy, then in the v1
    pids hierarchy."""
    mounts_v2: list[_Mount] = []
    mounts_v1: list[_Mount] = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as mountinfo:
            for line in mountinfo:
                fields = line.split()
                separator = fields.index("-")
                kind, options = fields[separator + 1], fields[separator + 3].split(",")
                mount = _Mount(Path(fields[4]), fields[3])
                if kind == "cgroup2":
                    mounts_v2.append(mount)
                elif kind == "cgroup" and "pids" in options:
                    mounts_v1.append(mount)
        with open("/proc/self/cgroup", encoding="utf-8") as cgroups:
            memberships = [line.rstrip("\n").split(":", 2) for line in cgroups]
    except (OSError, ValueError, IndexError):
        return []
    parents: list[tuple[str, Path]] = []
    for hierarchy, controllers, path in memberships:
        if hierarchy == "0" and controllers == "":
            parents.extend(("v2", _inside(mount, path)) for mount in mounts_v2)
        elif "pids" in controllers.split(","):
            parents.extend(("v1", _inside(mount, path)) for mount in mounts_v1)
    parents.sort(key=lambda candidate: candidate[0] != "v2")
    return parents


def _inside(mount: _Mount, cgroup_path: str) -> Path:
    relative = cgroup_path
    if mount.root != "/" and relative.startswith(mount.root):
        relative = relative[len(mount.root) :]
    return mount.point / relative.lstrip("/")


def _enable_pids_controller(parent: Path) -> None:
    """Make sure a child of `parent` (v2) gets a pids controller; OSError if it cannot."""
    if "pids" not in (parent / "cgroup.controllers").read_text().split():
        raise OSError(0, "the pids controller is not available there")
    if "pids" not in (parent / "cgroup.subtree_control").read_text().split():
        (parent / "cgroup.subtree_control").write_text("+pids")
