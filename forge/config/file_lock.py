"""An advisory lock beside the config file, so that saves from several processes take turns.

`fcntl.flock` on `.config.yaml.lock` in the file's directory. The lock file is left in place:
removing it would let two processes lock two different files of the same name.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_TIMEOUT_SECONDS = 10.0
"""How long a save waits for another process's save to finish before giving up."""
_POLL_SECONDS = 0.01


class LockTimeoutError(OSError):
    """Another process held the lock for longer than the timeout."""


def lock_path_for(path: Path) -> Path:
    """The lock file that guards `path`: `.NAME.lock` beside it."""
    return path.with_name(f".{path.name}.lock")


@contextmanager
def locked(path: Path, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the exclusive lock guarding `path` for the block (mode 0600 lock file).

    Raises OSError when the lock file cannot be created, LockTimeoutError after `timeout`
    seconds of another process holding it. The lock ends with the block, or with the process.
    """
    descriptor = os.open(lock_path_for(path), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockTimeoutError(
                        f"another process kept {lock_path_for(path)} locked for {timeout:g} s"
                    ) from None
                time.sleep(_POLL_SECONDS)
        yield
    finally:
        os.close(descriptor)
