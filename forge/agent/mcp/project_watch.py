"""Watching the workspace's definitions — `.forge/mcp.yaml` and the hook files
(`.forge/hooks.json`, `.claude/settings.json`) — and the workspace scripts they name
(`forge.agent.trust.scripts`), so edits apply while Forge runs: a changed definition or script
is asked about again (its MCP servers stopped first) and `/hooks` lists it (the user's
`config.yaml` is watched by `forge.config.watcher`; docs/adr/0048, 0047).

The workspace itself is watched without recursion (to see `.forge` or `.claude` appear), and
those folders and the named scripts' folders when they exist, each without recursion; nothing
else of the workspace is watched.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from watchfiles import Change, awatch

from forge.agent.hooks.config import PROJECT_HOOK_FILES
from forge.agent.mcp.servers import PROJECT_FILE
from forge.agent.trust.scripts import named_scripts
from forge.agent.trust.sources import workspace_sources
from forge.config.store import content_digest

logger = logging.getLogger(__name__)

WATCHED_FILES = (PROJECT_FILE, *PROJECT_HOOK_FILES)
"""The workspace's files that define what Forge runs (relative paths)."""

STEP_MILLISECONDS = 200
"""Quiet time after the last event before the file is read again."""


def _digest(path: Path) -> str:
    try:
        return content_digest(path.read_bytes())
    except OSError:
        return content_digest(None)


def watched_paths(workspace: Path) -> list[Path]:
    """The defining files, and the workspace scripts their definitions name now."""
    paths = {workspace / relative for relative in WATCHED_FILES}
    try:
        for source in workspace_sources(workspace):
            paths.update(workspace / name for name in named_scripts(source, workspace))
    except Exception:  # an unreadable definition names no script; its file is still watched
        logger.exception("the scripts of the workspace's definitions could not be listed")
    return sorted(paths)


def _digests(workspace: Path) -> dict[Path, str]:
    return {path: _digest(path) for path in watched_paths(workspace)}


async def watch_project_servers(
    workspace: Path,
    on_change: Callable[[], Awaitable[None] | None],
    stop_event: asyncio.Event,
) -> None:
    """Call `on_change` each time the content of one of the workspace's `WATCHED_FILES`, or
    of a workspace script they name, changes (created, edited, removed), until `stop_event`
    is set."""
    seen = await asyncio.to_thread(_digests, workspace)

    def folders_of(paths: dict[Path, str]) -> list[Path]:
        return sorted({path.parent for path in paths} | {workspace})

    while not stop_event.is_set():
        folders = folders_of(seen)
        names = {path.name for path in seen} | {folder.name for folder in folders}
        present = [folder for folder in folders if folder.is_dir()]

        def relevant(change: Change, changed: str, names: set[str] = names) -> bool:
            return Path(changed).name in names

        async for _changes in awatch(
            *present,
            watch_filter=relevant,
            stop_event=stop_event,
            debounce=1600,
            step=STEP_MILLISECONDS,
            recursive=False,
        ):
            digests = await asyncio.to_thread(_digests, workspace)
            if digests != seen:
                seen = digests
                outcome = on_change()
                if inspect.isawaitable(outcome):
                    await outcome
            now = folders_of(seen)
            if now != folders or [f for f in now if f.is_dir()] != present:
                break  # a folder came or went, or a script elsewhere is named: watch again
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
