"""Learn a model's context window from the server that serves it, not from its name.

A model's name says little about the window a local server gives it: llama-cpp-python served
a model called "tiny" with 2,048 tokens while the name table guessed 32,768. Servers say what
their window is, each in its own place:

| server | request | field |
|---|---|---|
| vLLM | `GET {base}/models` | `data[].max_model_len` |
| OpenRouter | `GET {base}/models` | `data[].context_length` (or `top_provider.context_length`) |
| LiteLLM proxy | `GET {base}/model/info` | `data[].model_info.max_input_tokens` |
| llama.cpp `llama-server` | `GET {root}/props` | `default_generation_settings.n_ctx` |
| Ollama | `POST {root}/api/show` | `num_ctx` in `parameters`, else `<arch>.context_length` |

(`root` is the base URL without its trailing `/v1`.) `WindowTracker` asks once, in the
background, and caches the answer per base URL and model in the XDG cache directory; a
configured `context.max_tokens` overrides everything and nothing is asked; a context-overflow
error that states the window ("maximum context length is 2048 tokens") teaches it too. Where
the window came from is kept (`WindowSource`) so `/context` can show it. See
docs/adr/0019-server-compatibility-and-window-discovery.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from forge.config.atomic import atomic_write_bytes
from forge.config.ephemeral import is_ephemeral
from forge.config.paths import cache_dir, ensure_dir
from forge.llm.model_info import context_window as guessed_context_window
from forge.llm.model_info import normalize_model_name

logger = logging.getLogger(__name__)

CACHE_FILE_NAME = "context-windows.json"
CACHE_MAX_AGE = 24 * 60 * 60.0
"""Seconds a cached answer (a window, or "the server states none") is used without asking."""
FIRST_REQUEST_WAIT = 2.0
"""The longest the first request of a session waits for the server's answer."""


class WindowSource(StrEnum):
    """Where the context window Forge budgets with came from."""

    CONFIGURED = "configured"
    SERVER = "reported by the server"
    OVERFLOW = "stated in the server's overflow error"
    GUESSED = "guessed from the model name"


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """A window in tokens and where it came from (`detail`: which endpoint and field).

    For `WindowSource.CONFIGURED`, `tokens` is the configured budget (`context.max_tokens`).
    """

    tokens: int
    source: WindowSource
    detail: str = ""

    def describe(self) -> str:
        """One line for `/context`, e.g. "2,048 tokens, reported by the server (/props n_ctx)"."""
        noun = "token budget" if self.source is WindowSource.CONFIGURED else "tokens"
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.tokens:,} {noun}, {self.source.value}{detail}"


JsonFetcher = Callable[[str, str, dict[str, Any] | None], Awaitable[Any]]
"""`fetch(method, url, json_body)`: the decoded JSON answer, or None when there is none
(an error status, not JSON, no connection). The provider's `fetch_json` is one."""


# --- reading each server's answer -------------------------------------------------------------


def _positive(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, float) and value.is_integer() and value > 0:
        return int(value)
    return None


def _entries(body: Any) -> list[dict[str, Any]]:
    data = body.get("data") if isinstance(body, dict) else None
    return [entry for entry in data if isinstance(entry, dict)] if isinstance(data, list) else []


def _matching(entries: list[dict[str, Any]], key: str, model: str) -> dict[str, Any] | None:
    """The entry whose `key` names `model`: exactly, else ignoring case, else ignoring a
    provider prefix ("openai/gpt-4o" and "gpt-4o")."""
    named = [(entry, entry.get(key)) for entry in entries if isinstance(entry.get(key), str)]
    for same in (
        lambda name: name == model,
        lambda name: name.lower() == model.lower(),
        lambda name: normalize_model_name(name) == normalize_model_name(model),
    ):
        for entry, name in named:
            if same(name):
                return entry
    return None


def window_from_model_list(body: Any, model: str) -> tuple[int, str] | None:
    """vLLM's `max_model_len` or OpenRouter's `context_length` for `model` in `/models`."""
    entry = _matching(_entries(body), "id", model)
    if entry is None:
        return None
    for field in ("max_model_len", "context_length"):
        tokens = _positive(entry.get(field))
        if tokens is not None:
            return tokens, f"/models {field}"
    top = entry.get("top_provider")
    if isinstance(top, dict):
        tokens = _positive(top.get("context_length"))
        if tokens is not None:
            return tokens, "/models top_provider.context_length"
    return None


def window_from_litellm_info(body: Any, model: str) -> tuple[int, str] | None:
    """LiteLLM's `model_info.max_input_tokens` for the model group `model` in `/model/info`."""
    entry = _matching(_entries(body), "model_name", model)
    info = entry.get("model_info") if entry is not None else None
    if not isinstance(info, dict):
        return None
    tokens = _positive(info.get("max_input_tokens"))
    return (tokens, "/model/info max_input_tokens") if tokens is not None else None


def window_from_llama_props(body: Any) -> tuple[int, str] | None:
    """llama-server's `n_ctx` in `/props` (per slot, which is what one request gets)."""
    if not isinstance(body, dict):
        return None
    settings = body.get("default_generation_settings")
    if isinstance(settings, dict):
        tokens = _positive(settings.get("n_ctx"))
        if tokens is not None:
            return tokens, "/props n_ctx"
    tokens = _positive(body.get("n_ctx"))
    return (tokens, "/props n_ctx") if tokens is not None else None


_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def window_from_ollama_show(body: Any) -> tuple[int, str] | None:
    """Ollama's window in `/api/show`: `num_ctx` among the model's parameters (what Ollama
    serves it with), else the model's own `<arch>.context_length`."""
    if not isinstance(body, dict):
        return None
    parameters = body.get("parameters")
    if isinstance(parameters, str):
        found = _NUM_CTX.search(parameters)
        if found and int(found.group(1)) > 0:
            return int(found.group(1)), "/api/show num_ctx"
    info = body.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            tokens = _positive(value)
            if key.endswith(".context_length") and tokens is not None:
                return tokens, f"/api/show {key}"
    return None


def server_root(base_url: str) -> str:
    """The base URL without a trailing `/v1` (where `/props` and `/api/show` live)."""
    base = base_url.rstrip("/")
    return base.removesuffix("/v1") if base.endswith("/v1") else base


async def ask_server(fetch: JsonFetcher, base_url: str, model: str) -> ContextWindow | None:
    """The window the server at `base_url` states for `model`, or None if it states none.

    The probes run at once; when several answer, the most specific wins: llama-server's
    `/props` (the window actually allocated), then `/models`, LiteLLM, Ollama.
    """
    base = base_url.rstrip("/")
    root = server_root(base)
    readers: tuple[tuple[str, str, dict[str, Any] | None, Callable[[Any], Any]], ...] = (
        ("GET", f"{root}/props", None, window_from_llama_props),
        ("GET", f"{base}/models", None, lambda body: window_from_model_list(body, model)),
        ("GET", f"{base}/model/info", None, lambda body: window_from_litellm_info(body, model)),
        ("POST", f"{root}/api/show", {"model": model}, window_from_ollama_show),
    )
    answers = await asyncio.gather(
        *(fetch(method, url, payload) for method, url, payload, _ in readers),
        return_exceptions=True,
    )
    for (_, _, _, read), answer in zip(readers, answers, strict=True):
        if isinstance(answer, BaseException) or answer is None:
            continue
        found = read(answer)
        if found is not None:
            tokens, detail = found
            return ContextWindow(tokens, WindowSource.SERVER, detail)
    return None


# --- the cache --------------------------------------------------------------------------------


class WindowCache:
    """What servers said, per base URL and model, in one small JSON file.

    An entry holds the window (or null: "this server states none") and when it was learned;
    entries older than `max_age` seconds are not used. A broken file counts as empty.
    """

    def __init__(self, path: Path | None = None, *, max_age: float = CACHE_MAX_AGE) -> None:
        self.path = path if path is not None else cache_dir() / CACHE_FILE_NAME
        self.max_age = max_age
        self._memory: dict[str, Any] = {}
        """Entries learned while writing is off (`forge run --ephemeral`)."""

    @staticmethod
    def key(base_url: str, model: str) -> str:
        """The entry's key: base URL (no trailing slash) and model."""
        return f"{base_url.rstrip('/')} {model}"

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        return {**data, **self._memory} if isinstance(data, dict) else dict(self._memory)

    def get(
        self, base_url: str, model: str, *, now: float | None = None
    ) -> tuple[ContextWindow | None] | None:
        """`(window,)` for a fresh entry (`(None,)`: the server states none), None if unknown."""
        entry = self._read().get(self.key(base_url, model))
        if not isinstance(entry, dict):
            return None
        current = time.time() if now is None else now
        checked = entry.get("checked_at")
        if not isinstance(checked, int | float) or not 0 <= current - checked <= self.max_age:
            return None
        tokens = _positive(entry.get("tokens"))
        if tokens is None:
            return (None,)
        try:
            source = WindowSource(str(entry.get("source")))
        except ValueError:
            return None
        return (ContextWindow(tokens, source, str(entry.get("detail") or "")),)

    def put(
        self, base_url: str, model: str, window: ContextWindow | None, *, now: float | None = None
    ) -> None:
        """Remember `window` (None: the server states none). Failing to write is only logged."""
        data = self._read()
        data[self.key(base_url, model)] = entry = {
            "tokens": window.tokens if window is not None else None,
            "source": window.source.value if window is not None else None,
            "detail": window.detail if window is not None else "",
            "checked_at": time.time() if now is None else now,
        }
        if is_ephemeral():  # `forge run --ephemeral`: kept in memory only
            self._memory[self.key(base_url, model)] = entry
            return
        try:
            ensure_dir(self.path.parent)
            atomic_write_bytes(
                self.path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode()
            )
        except OSError as error:
            logger.info("could not write the context-window cache %s: %s", self.path, error)


# --- the tracker ------------------------------------------------------------------------------


class WindowTracker:
    """The context window for one model on one server, and where it came from.

    `current` starts as the configured budget (`configured`, when set: nothing is then
    asked), else a fresh cached answer, else the guess from the model's name. `start()` asks
    the server in the background when the cache had no fresh answer; `settle()` waits for
    that answer at most `timeout` seconds. Each change of `current` calls `on_change`.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        fetch: JsonFetcher | None,
        configured: int | None = None,
        cache: WindowCache | None = None,
        on_change: Callable[[ContextWindow], None] | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._fetch = fetch
        self._cache = cache
        self.on_change = on_change
        self._task: asyncio.Task[None] | None = None
        self.first_request_wait = FIRST_REQUEST_WAIT
        """The longest `settle()` waits for the server's answer by default."""
        self._guess_told = False
        self._needs_asking = False
        if configured is not None:
            self.current = ContextWindow(configured, WindowSource.CONFIGURED, "context.max_tokens")
            return
        self.current = ContextWindow(guessed_context_window(model), WindowSource.GUESSED)
        cached = cache.get(self.base_url, model) if cache is not None else None
        if cached is None:
            self._needs_asking = fetch is not None
        elif cached[0] is not None:
            self.current = cached[0]

    @property
    def asking(self) -> bool:
        """Whether the server's answer is still awaited (or not yet asked for)."""
        return self._needs_asking and (self._task is None or not self._task.done())

    def start(self) -> None:
        """Ask the server in the background, if it must be asked and has not been. Needs a
        running event loop."""
        if self._needs_asking and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._ask())

    async def settle(self, wait: float | None = None) -> ContextWindow:
        """`current`, after waiting at most `wait` seconds (default `first_request_wait`) for
        the server's answer; the asking goes on in the background after that."""
        self.start()
        if self._task is not None and not self._task.done():
            limit = self.first_request_wait if wait is None else wait
            await asyncio.wait({self._task}, timeout=limit)
        return self.current

    async def _ask(self) -> None:
        assert self._fetch is not None
        try:
            window = await ask_server(self._fetch, self.base_url, self.model)
        except Exception:  # a probe must never break a session
            logger.exception("asking %s for the context window failed", self.base_url)
            return
        if self._cache is not None:
            self._cache.put(self.base_url, self.model, window)
        if window is None:
            logger.info("%s states no context window for %s", self.base_url, self.model)
        elif self.current.source is WindowSource.GUESSED:
            self._set(window)

    def learn_from_overflow(self, tokens: int) -> bool:
        """The server's overflow error stated its window: budget with it from now on (unless
        a window is configured). True when `current` changed."""
        if self.current.source is WindowSource.CONFIGURED or tokens <= 0:
            return False
        if self.current.tokens == tokens and self.current.source is not WindowSource.GUESSED:
            return False
        window = ContextWindow(tokens, WindowSource.OVERFLOW)
        if self._cache is not None:
            self._cache.put(self.base_url, self.model, window)
        self._set(window)
        return True

    def guess_notice(self) -> str | None:
        """The first time it is asked while the window is only a guess (and no answer is
        still awaited): a sentence saying so. None otherwise."""
        if self._guess_told or self.asking or self.current.source is not WindowSource.GUESSED:
            return None
        self._guess_told = True
        return (
            f"The context window of {self.model} is a guess from its name "
            f"({self.current.tokens:,} tokens): {self.base_url} does not state it. "
            "Set context.max_tokens if the server's window differs."
        )

    def _set(self, window: ContextWindow) -> None:
        self.current = window
        logger.info("context window for %s: %s", self.model, window.describe())
        if self.on_change is not None:
            self.on_change(window)

    async def aclose(self) -> None:
        """Stop asking (a session that ends before the answer leaves nothing running)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
