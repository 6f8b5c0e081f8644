"""Temporary files a checkpoint write leaves when Forge is killed during it are removed at
start (docs/adr/0036): a kill -9 while a 20 MB blob was written once left its `*.tmp` in
`blobs/` for good.

Every session's checkpoint directory is swept, not only the resumed one's, since a killed
session may never be resumed. A temporary file younger than `STALE_AFTER_SECONDS` is left
alone: another Forge process may be writing it right now.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from forge.agent.history.checkpoints import BLOB_DIRECTORY, CHECKPOINT_DIRECTORY_SUFFIX

logger = logging.getLogger(__name__)

STALE_AFTER_SECONDS = 300.0
"""A checkpoint write takes well under a second; a temporary file this old was abandoned."""


def remove_stale_temporaries(sessions_directory: Path, *, now: float | None = None) -> int:
    """Remove abandoned `*.tmp` files of every checkpoint directory under
    `sessions_directory` (blobs and the index); returns how many. Never raises."""
    now = time.time() if now is None else now
    patterns = (
        f"*{CHECKPOINT_DIRECTORY_SUFFIX}/{BLOB_DIRECTORY}/*.tmp",
        f"*{CHECKPOINT_DIRECTORY_SUFFIX}/*.tmp",
    )
    removed = 0
    try:
        candidates = [path for pattern in patterns for path in sessions_directory.glob(pattern)]
    except OSError:
        return 0
    for path in candidates:
        try:
            if now - path.stat().st_mtime < STALE_AFTER_SECONDS:
                continue
            size = path.stat().st_size
            path.unlink()
        except OSError:
            continue
        removed += 1
        logger.info("removed an abandoned checkpoint temporary file %s (%d bytes)", path, size)
    return removed
