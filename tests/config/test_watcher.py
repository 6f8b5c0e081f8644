"""The config watcher, on real files with real filesystem events."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from forge.config.paths import config_path
from forge.config.store import ConfigStore, LoadResult
from forge.config.watcher import watch_config, watch_store

GENEROUS_SECONDS = 30


def _write_config(path: Path, text: str) -> None:
    """Write the file (small and local, so a blocking write in a test coroutine is fine)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@dataclass
class Watching:
    """A running watcher and the results it reported."""

    path: Path
    results: asyncio.Queue[LoadResult] = field(default_factory=asyncio.Queue)
    seen: list[LoadResult] = field(default_factory=list)

    async def next_matching(self, model: str) -> LoadResult:
        """The next reported result whose llm.model (or error, for "error") matches."""

        async def wait() -> LoadResult:
            while True:
                result = await self.results.get()
                if model == "error" and result.error is not None:
                    return result
                if result.error is None and result.settings.llm.model == model:
                    return result

        return await asyncio.wait_for(wait(), GENEROUS_SECONDS)

    async def warm_up(self) -> None:
        """Edit until the watcher reports one, so it is surely listening before the test acts."""

        async def edit_until_seen() -> None:
            attempt = 0
            while True:
                attempt += 1
                _write_config(self.path, f"llm:\n  model: warm-up-{attempt}\n")
                try:
                    await asyncio.wait_for(self._drain_until_warm(), 1)
                    return
                except TimeoutError:
                    continue

        await asyncio.wait_for(edit_until_seen(), GENEROUS_SECONDS)

    async def _drain_until_warm(self) -> None:
        while True:
            result = await self.results.get()
            if result.error is None and result.settings.llm.model.startswith("warm-up-"):
                return

    def record(self, result: LoadResult) -> None:
        self.seen.append(result)
        self.results.put_nowait(result)


@contextlib.asynccontextmanager
async def running_watcher(path: Path, store: ConfigStore | None = None) -> AsyncIterator[Watching]:
    _write_config(path, "llm:\n  model: initial\n")
    watching = Watching(path)
    stop = asyncio.Event()
    if store is None:
        task = asyncio.create_task(watch_config(path, watching.record, stop))
    else:
        task = asyncio.create_task(watch_store(store, watching.record, stop))
    try:
        await watching.warm_up()
        yield watching
    finally:
        stop.set()
        await asyncio.wait_for(task, GENEROUS_SECONDS)


async def test_watcher_sees_an_in_place_edit() -> None:
    async with running_watcher(config_path()) as watching:
        _write_config(watching.path, "llm:\n  model: edited-in-place\n")
        result = await watching.next_matching("edited-in-place")
        assert result.path == watching.path


async def test_watcher_sees_an_atomic_replace_like_an_editor_save() -> None:
    async with running_watcher(config_path()) as watching:
        temporary = watching.path.with_name(".config.yaml.swp-new")
        _write_config(temporary, "llm:\n  model: replaced\n")
        os.replace(temporary, watching.path)
        await watching.next_matching("replaced")


async def test_watcher_reports_an_invalid_edit_as_an_error() -> None:
    async with running_watcher(config_path()) as watching:
        _write_config(watching.path, "llm:\n  model: fine\ncontext:\n  warning_threshold: 3\n")
        result = await watching.next_matching("error")
        assert result.error is not None
        assert (result.error.line, result.error.key) == (4, "context.warning_threshold")
        # The valid values of the edit are kept; the reload controller decides what to apply.
        assert result.settings.llm.model == "fine"
        assert result.settings.context.warning_threshold == 0.85


async def test_watcher_ignores_other_files_in_the_directory() -> None:
    async with running_watcher(config_path()) as watching:
        _write_config(watching.path.parent / "other.yaml", "llm:\n  model: not-mine\n")
        _write_config(watching.path, "llm:\n  model: mine\n")
        await watching.next_matching("mine")
        assert all(
            result.error is not None or result.settings.llm.model != "not-mine"
            for result in watching.seen
        )


async def test_store_watch_skips_its_own_save_and_tracks_outside_edits() -> None:
    store = ConfigStore()
    async with running_watcher(store.path, store) as watching:
        store.load()
        current = store.current.settings
        saved = current.model_copy(
            update={"llm": current.llm.model_copy(update={"model": "saved-by-forge"})}
        )
        store.save(saved, {"llm.model"})
        # Give the watcher time to see (and skip) the save before the outside edit lands.
        await asyncio.sleep(1.5)
        _write_config(watching.path, "llm:\n  model: edited-outside\n")
        await watching.next_matching("edited-outside")
        assert [
            result for result in watching.seen if result.settings.llm.model == "saved-by-forge"
        ] == []
        assert store.current.settings.llm.model == "edited-outside"


async def test_stop_event_ends_the_watch(tmp_path: Path) -> None:
    stop = asyncio.Event()
    path = tmp_path / "new-dir" / "config.yaml"
    task = asyncio.create_task(watch_config(path, lambda result: None, stop))
    await asyncio.sleep(0.2)
    stop.set()
    await asyncio.wait_for(task, GENEROUS_SECONDS)
    assert path.parent.is_dir()  # created so there is something to watch


@pytest.mark.parametrize("asynchronous", [True, False])
async def test_callbacks_may_be_sync_or_async(asynchronous: bool) -> None:
    received: asyncio.Queue[str] = asyncio.Queue()

    async def on_change_async(result: LoadResult) -> None:
        await received.put(result.settings.llm.model)

    def on_change_sync(result: LoadResult) -> None:
        received.put_nowait(result.settings.llm.model)

    path = config_path()
    stop = asyncio.Event()
    callback = on_change_async if asynchronous else on_change_sync
    task = asyncio.create_task(watch_config(path, callback, stop))

    async def edit_until_reported() -> None:
        attempt = 0
        while True:
            attempt += 1
            _write_config(path, f"llm:\n  model: attempt-{attempt}\n")
            with contextlib.suppress(TimeoutError):
                model = await asyncio.wait_for(received.get(), 1)
                assert model.startswith("attempt-")
                return

    try:
        await asyncio.wait_for(edit_until_reported(), GENEROUS_SECONDS)
    finally:
        stop.set()
        await asyncio.wait_for(task, GENEROUS_SECONDS)
