"""Watching the workspace's definitions — `.forge/mcp.yaml` and the hook files
(`.forge/hooks.json`, `.claude/settings.json`) — so edits apply while Forge runs: a changed
definition is asked about again and `/hooks` lists it (the user's `config.yaml` is watched by
`forge.config.watcher`; docs/adr/0048).

The workspace itself is watched without recursion (to see `.forge` or `.claude` appear), and
those folders when they exist; nothing else of the workspace is watched.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path

from watchfiles import Change, awatch

from forge.agent.hooks.config import PROJECT_HOOK_FILES
from forge.agent.mcp.servers import PROJECT_FILE
from forge.config.store import content_digest

WATCHED_FILES = (PROJECT_FILE, *PROJECT_HOOK_FILES)
"""The workspace's files that define what Forge runs (relative paths)."""

STEP_MILLISECONDS = 200
"""Quiet time after the last event before the file is read again."""


def _digest(path: Path) -> str:
    try:
        return content_digest(path.read_bytes())
    except OSError:
        return content_digest(None)


def _digests(paths: list[Path]) -> list[str]:
    return [_digest(path) for path in paths]


async def watch_project_servers(
    workspace: Path,
    on_change: Callable[[], Awaitable[None] | None],
    stop_event: asyncio.Event,
) -> None:
    """Call `on_change` each time the content of one of the workspace's `WATCHED_FILES`
    changes (created, edited, removed), until `stop_event` is set."""
    paths = [workspace / relative for relative in WATCHED_FILES]
    folders = sorted({path.parent for path in paths})
    names = {path.name for path in paths} | {folder.name for folder in folders}
    seen = await asyncio.to_thread(_digests, paths)

    def relevant(change: Change, changed: str) -> bool:
        return Path(changed).name in names

    while not stop_event.is_set():
        present = [folder for folder in folders if folder.is_dir()]
        async for _changes in awatch(
            workspace,
            *present,
            watch_filter=relevant,
            stop_event=stop_event,
            debounce=1600,
            step=STEP_MILLISECONDS,
            recursive=False,
        ):
            digests = await asyncio.to_thread(_digests, paths)
            if digests != seen:
                seen = digests
                outcome = on_change()
                if inspect.isawaitable(outcome):
                    await outcome
            if [folder for folder in folders if folder.is_dir()] != present:
                break  # a folder came or went: watch again with the right folders
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
