"""How the parts a settings switch may replace are made: the context-window tracker, the
context manager, the secrets to mask (used by `build_session` and `apply_settings`)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from forge.agent.history.session_file import SessionStore
from forge.agent.providers import AnyProvider
from forge.config.ephemeral import is_ephemeral
from forge.config.secrets import remember_settings_secrets
from forge.config.settings import Settings
from forge.context.cache_pricing import CachePricing, cache_pricing_for
from forge.context.counting_provider import UsageSink
from forge.context.events import EventSink
from forge.context.manager import Manager
from forge.llm.model_info import context_window
from forge.llm.tokenizer import TiktokenCounter
from forge.llm.window_discovery import ContextWindow, WindowCache, WindowSource, WindowTracker


def make_window_tracker(settings: Settings, provider: AnyProvider) -> WindowTracker:
    """The context window of the settings' model on their server: `context.max_tokens` when
    set, else what the server states (asked in the background, cached), else a guess from
    the name (docs/adr/0019). The tracker starts asking if an event loop is running."""
    tracker = WindowTracker(
        settings.llm.model,
        settings.llm.effective_base_url,
        fetch=provider.fetch_json,
        configured=settings.context.max_tokens,
        cache=WindowCache(),
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return tracker  # started by the first turn (`Agent` settles it before its first call)
    tracker.start()
    return tracker


def window_tokens(window: ContextWindow, model: str) -> int:
    """The window the context manager budgets with (a configured budget is applied by the
    manager itself, so the name's window stands beside it)."""
    return context_window(model) if window.source is WindowSource.CONFIGURED else window.tokens


def secrets_of(settings: Settings, file_data: Mapping[str, Any] | None = None) -> list[str]:
    """Values that must never reach a session file or a log: every API key Forge knows of —
    these settings' key, the environment's, the file's (`file_data`, the config file's raw
    mapping) and every key seen earlier in this process. They are remembered process-wide
    (`forge.config.secrets.KNOWN_SECRETS`), so every artefact writer masks them."""
    return remember_settings_secrets(settings, file_data)


def summary_dir(store: SessionStore, session_id: str) -> Path | None:
    """Where summaries are archived; none with `forge run --ephemeral`."""
    return None if is_ephemeral() else store.summary_dir(session_id)


def make_manager(
    settings: Settings,
    provider: AnyProvider,
    counter: TiktokenCounter,
    summaries: Path | None,
    window: ContextWindow,
    usage_sink: UsageSink,
    emit: EventSink,
) -> Manager:
    """The context manager for `settings`; the summarization model is the settings' (its
    one home: `settings.llm.summarization_model`, handed on here and by `apply_settings`)."""
    manager = Manager(
        settings.context,
        provider,
        counter,
        context_window=window_tokens(window, settings.llm.model),
        summarization_model=settings.llm.summarization_model,
        summary_dir=summaries,
        usage_sink=usage_sink,
        emit=emit,  # the agent's router: context events reach the running turn (ADR 0039)
    )
    manager.set_cache_pricing(model_cache_pricing(settings))
    return manager


def model_cache_pricing(settings: Settings) -> CachePricing:
    """The conversation model's prompt-cache prices for the context manager, from the price
    table and the provider's kind of cache (docs/adr/0038 §8)."""
    return cache_pricing_for(settings.llm.provider, settings.llm.model, settings.prices)
