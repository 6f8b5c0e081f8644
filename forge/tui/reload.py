"""Hot reload: settings saved in the overlay or edited on disk reach the running agent.

`ConfigReloadController` owns the one path by which new settings are applied: the settings
screen's result (`apply_saved`) and the file watcher (`start`) both end in `apply`, which hands
the settings to the session (new provider, new summarization model) and tells the app with an
`Applied` message and a toast; `/model NAME`, a change for this session only (not saved), goes
through `apply_override`. An invalid edit on disk is reported (`Rejected`) and the
running settings stay. Forge's own saves are recognised by the store's last-written digest, so
the watcher does not apply them a second time.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from textual.app import App
from textual.message import Message
from textual.worker import Worker

from forge.config.errors import ConfigError
from forge.config.settings import Settings
from forge.config.store import LoadResult
from forge.config.watcher import WatchableStore, watch_store
from forge.session.settings_changes import describe_changes

logger = logging.getLogger(__name__)

ReloadSource = Literal["file", "settings"]


class ReloadableStore(WatchableStore, Protocol):
    """What the controller needs from `forge.config.ConfigStore` (watched by `watch_store`)."""

    @property
    def current(self) -> LoadResult:
        """The latest load of the config file."""
        ...


class SwitchableSession(Protocol):
    """What the controller needs from `forge.session.core.Session`."""

    settings: Settings
    """The settings the session is running with."""

    def apply_settings(self, new: Settings) -> str | Awaitable[str]:
        """Switch the running agent to `new`; returns a one-line description of what changed."""
        ...


class ConfigReloadController:
    """Applies new settings to the running agent, from the settings overlay or from the file.

    Create it with the app, the config store and the session; call `start()` once the app is
    running to watch the file, and pass `apply_saved` as the settings screen's callback.
    """

    @dataclass
    class Applied(Message):
        """New settings are in effect (the session has switched to them)."""

        settings: Settings
        """The settings now running."""
        description: str
        """What changed, one change per line (the API key is never shown)."""
        source: ReloadSource = "file"
        """Where they came from: "settings" (the overlay) or "file" (an outside edit)."""

    @dataclass
    class Rejected(Message):
        """A change could not be applied; the running settings stay as they were."""

        error: ConfigError | Exception
        """Why: a ConfigError (with file, line and key) or the session's exception."""

    def __init__(
        self, *, app: App[Any], store: ReloadableStore, session: SwitchableSession
    ) -> None:
        self.app = app
        self.store = store
        self.session = session
        """The session to switch; the app replaces it here when it starts a new session."""
        self._stop_event = asyncio.Event()
        self._worker: Worker[None] | None = None

    # --- the watcher -------------------------------------------------------------------------
    def start(self) -> Worker[None]:
        """Watch the config file in a worker (group "config-watch"); returns the worker."""
        self._stop_event = asyncio.Event()
        self._worker = self.app.run_worker(
            self._watch(),
            name="config-watch",
            group="config-watch",
            exclusive=True,
            exit_on_error=False,
            description=f"watching {self.store.current.path}",
        )
        return self._worker

    def stop(self) -> None:
        """Stop watching (the worker ends within one watcher step)."""
        self._stop_event.set()

    async def _watch(self) -> None:
        # The watcher blocks in a thread that a plain cancel cannot interrupt (anyio shields
        # it until its 5 s timeout), so cancellation is turned into the stop event it polls.
        watch_task = asyncio.ensure_future(
            watch_store(self.store, self._on_file_change, self._stop_event)
        )
        try:
            await asyncio.shield(watch_task)
        except asyncio.CancelledError:
            self._stop_event.set()
            await asyncio.gather(watch_task, return_exceptions=True)
            raise

    async def _on_file_change(self, result: LoadResult) -> None:
        if result.error is not None and result.error.source == "file":
            self.reject(result.error)
            return
        await self.apply(result, source="file")

    def reject(self, error: ConfigError | Exception) -> None:
        """Report a change that cannot be applied; the running settings stay."""
        logger.warning("config change not applied: %s", error)
        self.app.notify(
            f"{error}\nThe running settings are unchanged.",
            title="Config not reloaded",
            severity="error",
            timeout=10,
            markup=False,
        )
        self.app.post_message(self.Rejected(error))

    # --- applying ----------------------------------------------------------------------------
    async def apply_override(self, settings: Settings) -> str:
        """A session-only change (`/model NAME`): the session switches to `settings` as for
        a saved change, but the config file is not written and no toast is shown (the
        caller says it in the chat). Raises what the session raised (the settings stay)."""
        outcome = self.session.apply_settings(settings)
        description = await outcome if inspect.isawaitable(outcome) else outcome
        logger.info("session-only settings applied: %s", description)
        return description

    async def apply_saved(self, result: LoadResult | None) -> None:
        """The settings screen's callback: apply a saved load; None (cancelled) does nothing."""
        if result is None:
            return
        await self.apply(result, source="settings")

    async def apply(self, result: LoadResult, *, source: ReloadSource) -> bool:
        """Give `result.settings` to the session, then announce it. Returns whether it applied.

        A session that cannot switch (say, a provider it cannot build) leaves the running
        settings as they were and is reported as `Rejected`.
        """
        # Compared with what the session runs, which `/model` may have changed meanwhile.
        changes = describe_changes(self.session.settings, result.settings)
        try:
            outcome = self.session.apply_settings(result.settings)
            session_description = await outcome if inspect.isawaitable(outcome) else outcome
        except Exception as error:
            self.reject(error)
            return False
        description = "\n".join(changes) or str(session_description or "") or "no changes"
        logger.info("settings applied from %s: %s", source, description.replace("\n", "; "))
        title = "Settings applied" if source == "settings" else "Config reloaded"
        warning = ""
        if result.error is not None:
            warning = f"\n{result.error}"
        self.app.notify(description + warning, title=title, markup=False)
        self.app.post_message(self.Applied(result.settings, description, source))
        return True
