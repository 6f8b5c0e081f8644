"""Writing a file so that readers see either the old content or the new, never a torn mix."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: Path, content: bytes, mode: int = 0o600) -> None:
    """Replace `path` with `content`: a temp file in the same directory, fsync, `os.replace`.

    The new file has `mode` from its first byte on (the temp file is created private). On any
    failure the temp file is removed, the old file is untouched and the OSError propagates.
    """
    directory = path.parent
    descriptor, temp_name = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as temp_file:
            os.fchmod(temp_file.fileno(), mode)
            temp_file.write(content)
            temp_file.flush()
            os.fsync(temp_file.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable; some filesystems cannot fsync a directory, which is harmless."""
    try:
        directory_descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(directory_descriptor)
    except OSError:
        pass
    finally:
        os.close(directory_descriptor)
