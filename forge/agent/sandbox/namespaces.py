"""The session's one network namespace (docs/adr/0053).

Every confined command of a session joins the same network namespace, which has a loopback
and nothing else: a server one command (or, later, a background command) starts on
127.0.0.1 is reachable by the session's next commands, and nothing reaches the host or
beyond. A small holder process, started with bubblewrap at the session's first confined
command, keeps the namespace; Forge opens it (`/proc/PID/ns/net`, and the holder's user
namespace when Forge is not root) and each command enters it between fork and exec
(`enter`). The holder reads its stdin until Forge closes it (or dies), so it never outlives
the session.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import subprocess
from collections.abc import Callable

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
HOLDER_START_TIMEOUT_SECONDS = 10.0


def _load_setns() -> Callable[[int, int], int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        setns = libc.setns
    except (OSError, AttributeError):
        return None
    setns.argtypes = [ctypes.c_int, ctypes.c_int]
    setns.restype = ctypes.c_int
    return setns


_SETNS = _load_setns()
"""Looked up once, in the parent: the child between fork and exec must only call it."""


class SessionNetwork:
    """The namespace holder of one session; `start` once, `enter` in each command's child."""

    def __init__(self, bwrap: str) -> None:
        """`bwrap`: the bubblewrap executable that creates the namespace."""
        self.bwrap = bwrap
        self.problem = ""
        self._holder: subprocess.Popen[bytes] | None = None
        self._net: int | None = None
        self._user: int | None = None

    @property
    def ready(self) -> bool:
        """Whether commands can join the namespace."""
        return self._net is not None

    @property
    def identity(self) -> str:
        """The namespace as `readlink /proc/self/ns/net` shows it inside ("" before start)."""
        if self._holder is None or self._net is None:
            return ""
        return os.readlink(f"/proc/self/fd/{self._net}")

    def start(self) -> None:
        """Start the holder and open its namespaces (once); on failure `problem` says why."""
        if self._net is not None or self.problem:
            return
        if _SETNS is None:
            self.problem = "setns(2) is not available"
            return
        info_read, info_write = os.pipe()
        try:
            self._holder = subprocess.Popen(
                [
                    self.bwrap,
                    "--ro-bind",
                    "/",
                    "/",
                    "--dev",
                    "/dev",
                    "--unshare-net",
                    "--die-with-parent",
                    "--info-fd",
                    str(info_write),
                    "--",
                    "/bin/sh",
                    "-c",
                    "while read -r _; do :; done",
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(info_write,),
                start_new_session=True,
            )
        except OSError as error:
            os.close(info_read)
            os.close(info_write)
            self.problem = f"cannot start the network namespace holder: {error}"
            return
        os.close(info_write)
        with os.fdopen(info_read, "rb") as info:
            text = info.read().decode("utf-8", "replace")
        try:
            pid = int(json.loads(text)["child-pid"])
            self._net = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
            if os.geteuid() != 0:
                self._user = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY)
        except (ValueError, KeyError, TypeError, OSError) as error:
            stderr = self._stop_holder()
            self.problem = f"the network namespace holder failed: {stderr or error}"

    def enter(self) -> None:
        """Join the namespace (call in the command's child, between fork and exec)."""
        setns = _SETNS
        if self._net is None or setns is None:
            return
        if self._user is not None and setns(self._user, CLONE_NEWUSER) != 0:
            os._exit(126)
        if setns(self._net, CLONE_NEWNET) != 0:
            os._exit(126)

    def close(self) -> None:
        """Stop the holder and drop the namespace."""
        for descriptor in (self._net, self._user):
            if descriptor is not None:
                with contextlib.suppress(OSError):
                    os.close(descriptor)
        self._net = self._user = None
        self._stop_holder()

    def _stop_holder(self) -> str:
        holder, self._holder = self._holder, None
        if holder is None:
            return ""
        with contextlib.suppress(OSError):
            if holder.stdin is not None:
                holder.stdin.close()  # the holder's `read` ends: it exits
        try:
            holder.wait(timeout=2)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()
        stderr = holder.stderr.read() if holder.stderr is not None else b""
        if holder.stderr is not None:
            holder.stderr.close()
        return stderr.decode("utf-8", "replace").strip()
