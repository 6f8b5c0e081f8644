"""Reloading the config when the file changes on disk.

The parent directory is watched, not the file: editors save by writing a new file and renaming
it over the old one, which a watch on the old file's inode would miss. A symlinked config is
watched in its target's directory, where the file really changes. This module depends on
`forge.config.store`; the store knows nothing of it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from watchfiles import Change, awatch

from forge.config.paths import ensure_dir
from forge.config.store import LoadResult, content_digest, load_settings

DEFAULT_DEBOUNCE_MILLISECONDS = 200
"""Quiet time after the last event before reloading."""
LONGEST_GROUPING_MILLISECONDS = 1600
"""A steady stream of events still reloads at least this often."""


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _followed(path: Path) -> Path:
    """`path`, or its target when it is a symlink."""
    return path.resolve() if path.is_symlink() else path


async def watch_config(
    path: Path,
    on_change: Callable[[LoadResult], Awaitable[None] | None],
    stop_event: asyncio.Event | None = None,
    *,
    own_write_digest: Callable[[], str | None] | None = None,
    debounce_milliseconds: int = DEFAULT_DEBOUNCE_MILLISECONDS,
) -> None:
    """Call `on_change` with a fresh `load_settings(path)` each time the file's content changes.

    Runs until `stop_event` is set or the task is cancelled. Bursts of events are debounced
    into one reload; a change that leaves the content as it was is ignored, and so is content
    whose digest equals `own_write_digest()` (what Forge itself just saved). An invalid edit
    is reported like any other, as a LoadResult with `error` set. Creates the parent directory
    (mode 0700) if it is missing, since there would be nothing to watch otherwise. When `path`
    is a symlink, its target's directory is watched (the link itself rarely changes). An
    exception raised by `on_change` ends the watch and propagates to the caller.
    """
    watched = await asyncio.to_thread(_followed, path)
    directory = await asyncio.to_thread(ensure_dir, watched.parent)
    target_name = watched.name
    last_seen_digest = content_digest(await asyncio.to_thread(_read_bytes, path))

    def concerns_config_file(change: Change, changed_path: str) -> bool:
        return Path(changed_path).name == target_name

    async for _changes in awatch(
        directory,
        watch_filter=concerns_config_file,
        stop_event=stop_event,
        debounce=max(LONGEST_GROUPING_MILLISECONDS, debounce_milliseconds),
        step=debounce_milliseconds,
        recursive=False,
    ):
        digest = content_digest(await asyncio.to_thread(_read_bytes, path))
        if digest == last_seen_digest:
            continue
        last_seen_digest = digest
        if own_write_digest is not None and digest == own_write_digest():
            continue
        outcome = on_change(await asyncio.to_thread(load_settings, path))
        if inspect.isawaitable(outcome):
            await outcome


class WatchableStore(Protocol):
    """What `watch_store` needs from `forge.config.store.ConfigStore`."""

    path: Path
    """The config file."""
    last_written_digest: str | None
    """The digest of what the store itself last wrote (None: nothing yet)."""

    def accept(self, result: LoadResult) -> None:
        """Make `result` the store's current load."""
        ...


async def watch_store(
    store: WatchableStore,
    on_change: Callable[[LoadResult], Awaitable[None] | None],
    stop_event: asyncio.Event | None = None,
) -> None:
    """Watch `store`'s file; on an outside change, reload, make it `store.current`, call
    `on_change`. Forge's own saves through `store` are recognised and skipped."""

    async def _accept(result: LoadResult) -> None:
        store.accept(result)
        outcome = on_change(result)
        if outcome is not None:
            await outcome

    await watch_config(
        store.path,
        _accept,
        stop_event,
        own_write_digest=lambda: store.last_written_digest,
    )
