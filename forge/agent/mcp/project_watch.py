"""Watching the workspace's `.forge/mcp.yaml`, so edits to the project's servers apply while
Forge runs (the user's `config.yaml` is watched by `forge.config.watcher`).

The workspace itself is watched without recursion (to see `.forge` appear), and `.forge`
when it exists; nothing else of the workspace is watched.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path

from watchfiles import Change, awatch

from forge.agent.mcp.servers import PROJECT_FILE
from forge.config.store import content_digest

STEP_MILLISECONDS = 200
"""Quiet time after the last event before the file is read again."""


def _digest(path: Path) -> str:
    try:
        return content_digest(path.read_bytes())
    except OSError:
        return content_digest(None)


async def watch_project_servers(
    workspace: Path,
    on_change: Callable[[], Awaitable[None] | None],
    stop_event: asyncio.Event,
) -> None:
    """Call `on_change` each time the content of `workspace/.forge/mcp.yaml` changes
    (created, edited, removed), until `stop_event` is set."""
    path = workspace / PROJECT_FILE
    folder = path.parent
    seen = await asyncio.to_thread(_digest, path)

    def relevant(change: Change, changed: str) -> bool:
        return Path(changed).name in (folder.name, path.name)

    while not stop_event.is_set():
        had_folder = folder.is_dir()
        watched = [workspace, folder] if had_folder else [workspace]
        async for _changes in awatch(
            *watched,
            watch_filter=relevant,
            stop_event=stop_event,
            debounce=1600,
            step=STEP_MILLISECONDS,
            recursive=False,
        ):
            digest = await asyncio.to_thread(_digest, path)
            if digest != seen:
                seen = digest
                outcome = on_change()
                if inspect.isawaitable(outcome):
                    await outcome
            if folder.is_dir() != had_folder:
                break  # `.forge` came or went: watch again with the right folders
        else:
            return  # stopped


async def watch_until_cancelled(
    workspace: Path, on_change: Callable[[], Awaitable[None] | None]
) -> None:
    """`watch_project_servers` as a task that ends promptly when cancelled (watchfiles blocks
    in a thread a plain cancel cannot interrupt, so cancellation sets its stop event)."""
    stop = asyncio.Event()
    task = asyncio.ensure_future(watch_project_servers(workspace, on_change, stop))
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.gather(task, return_exceptions=True)
        raise
