"""Context-window discovery against the loopback server answering as each server does."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.window_discovery import (
    ContextWindow,
    WindowCache,
    WindowSource,
    WindowTracker,
    ask_server,
)
from tests.support.openai_server import Info, OpenAIServer

VLLM_MODELS = {
    "object": "list",
    "data": [
        {
            "id": "Qwen/Qwen2.5-Coder-7B-Instruct",
            "object": "model",
            "owned_by": "vllm",
            "root": "Qwen/Qwen2.5-Coder-7B-Instruct",
            "max_model_len": 16384,
        }
    ],
}
OPENROUTER_MODELS = {
    "data": [
        {"id": "openai/gpt-4o", "context_length": 128000},
        {
            "id": "qwen/qwen3-coder",
            "context_length": None,
            "top_provider": {"context_length": 262144, "max_completion_tokens": 65536},
        },
    ]
}
LITELLM_MODEL_INFO = {
    "data": [
        {
            "model_name": "local-coder",
            "litellm_params": {"model": "openai/tiny"},
            "model_info": {"max_input_tokens": 8192, "max_output_tokens": 1024},
        }
    ]
}
LLAMA_SERVER_PROPS = {
    "default_generation_settings": {"n_ctx": 4096, "params": {"temperature": 0.8}},
    "total_slots": 1,
    "model_path": "models/tiny.gguf",
}
OLLAMA_SHOW = {
    "modelfile": "FROM llama3.1",
    "parameters": 'num_ctx                        8192\nstop                "<|eot_id|>"',
    "model_info": {"general.architecture": "llama", "llama.context_length": 131072},
}


@pytest.fixture
async def provider(llm_server: OpenAIServer) -> AsyncIterator[OpenAICompatibleProvider]:
    instance = OpenAICompatibleProvider("unset", llm_server.base_url, "sk-probe")
    yield instance
    await instance.aclose()


async def discover(provider: OpenAICompatibleProvider, model: str) -> ContextWindow | None:
    return await ask_server(provider.fetch_json, provider.base_url, model)


async def test_vllm_max_model_len_in_models(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.info["/v1/models"] = Info(VLLM_MODELS)
    window = await discover(provider, "Qwen/Qwen2.5-Coder-7B-Instruct")
    assert window == ContextWindow(16384, WindowSource.SERVER, "/models max_model_len")
    # The key goes with the probe, as with every request to this server.
    probe = next(r for r in llm_server.info_requests if r.path == "/v1/models")
    assert probe.headers["authorization"] == "Bearer sk-probe"


async def test_openrouter_context_length_in_models(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.info["/v1/models"] = Info(OPENROUTER_MODELS)
    assert await discover(provider, "openai/gpt-4o") == ContextWindow(
        128000, WindowSource.SERVER, "/models context_length"
    )
    found = await discover(provider, "qwen/qwen3-coder")
    assert found is not None and found.tokens == 262144


async def test_litellm_max_input_tokens_in_model_info(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.info["/v1/model/info"] = Info(LITELLM_MODEL_INFO)
    assert await discover(provider, "local-coder") == ContextWindow(
        8192, WindowSource.SERVER, "/model/info max_input_tokens"
    )


async def test_llama_server_n_ctx_in_props(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.info["/props"] = Info(LLAMA_SERVER_PROPS)
    # /props wins over a listing that also answers: it is the window actually allocated.
    llm_server.info["/v1/models"] = Info({"data": [{"id": "tiny", "max_model_len": 99999}]})
    assert await discover(provider, "tiny") == ContextWindow(
        4096, WindowSource.SERVER, "/props n_ctx"
    )


async def test_ollama_num_ctx_then_context_length_in_api_show(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.info["/api/show"] = Info(OLLAMA_SHOW)
    assert await discover(provider, "llama3.1:8b") == ContextWindow(
        8192, WindowSource.SERVER, "/api/show num_ctx"
    )
    show = next(r for r in llm_server.info_requests if r.path == "/api/show")
    assert show.body == {"model": "llama3.1:8b"}
    without_num_ctx = {key: value for key, value in OLLAMA_SHOW.items() if key != "parameters"}
    llm_server.info["/api/show"] = Info(without_num_ctx)
    found = await discover(provider, "llama3.1:8b")
    assert found == ContextWindow(131072, WindowSource.SERVER, "/api/show llama.context_length")


async def test_a_server_that_states_nothing_gives_none(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    # llama-cpp-python: a listing without any window field; every other probe is a 404.
    llm_server.info["/v1/models"] = Info({"data": [{"id": "tiny", "owned_by": "me"}]})
    assert await discover(provider, "tiny") is None
    assert {r.path for r in llm_server.info_requests} == {
        "/v1/models",
        "/v1/model/info",
        "/props",
        "/api/show",
    }


async def test_another_hosts_url_is_never_fetched(provider: OpenAICompatibleProvider) -> None:
    assert await provider.fetch_json("GET", "http://example.invalid/v1/models") is None


# --- the tracker ------------------------------------------------------------------------------


def tracker_for(
    provider: OpenAICompatibleProvider, model: str, cache: WindowCache, **kwargs: Any
) -> WindowTracker:
    return WindowTracker(model, provider.base_url, fetch=provider.fetch_json, cache=cache, **kwargs)


async def test_the_answer_is_cached_per_base_url_and_model(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer, tmp_path: Path
) -> None:
    cache = WindowCache(tmp_path / "windows.json")
    llm_server.info["/props"] = Info(LLAMA_SERVER_PROPS)
    changes: list[ContextWindow] = []
    first = tracker_for(provider, "tiny", cache, on_change=changes.append)
    assert first.current.source is WindowSource.GUESSED
    assert (await first.settle(wait=30)).tokens == 4096
    assert changes == [ContextWindow(4096, WindowSource.SERVER, "/props n_ctx")]
    asked = len(llm_server.info_requests)

    second = tracker_for(provider, "tiny", cache)
    assert second.current == ContextWindow(4096, WindowSource.SERVER, "/props n_ctx")
    await second.settle(wait=30)
    assert len(llm_server.info_requests) == asked  # the cache answered
    other_model = tracker_for(provider, "other", cache)
    assert other_model.current.source is WindowSource.GUESSED
    stored = json.loads((tmp_path / "windows.json").read_text())
    assert stored[f"{provider.base_url} tiny"]["tokens"] == 4096


async def test_a_stale_cache_entry_is_asked_again(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer, tmp_path: Path
) -> None:
    cache = WindowCache(tmp_path / "windows.json", max_age=60)
    cache.put(provider.base_url, "tiny", ContextWindow(512, WindowSource.SERVER), now=0.0)
    llm_server.info["/props"] = Info(LLAMA_SERVER_PROPS)
    tracker = tracker_for(provider, "tiny", cache)
    assert tracker.current.source is WindowSource.GUESSED
    assert (await tracker.settle(wait=30)).tokens == 4096


async def test_a_configured_budget_overrides_and_nothing_is_asked(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer, tmp_path: Path
) -> None:
    llm_server.info["/props"] = Info(LLAMA_SERVER_PROPS)
    tracker = tracker_for(provider, "tiny", WindowCache(tmp_path / "w.json"), configured=6000)
    window = await tracker.settle(wait=30)
    assert window == ContextWindow(6000, WindowSource.CONFIGURED, "context.max_tokens")
    assert window.describe() == "6,000 token budget, configured (context.max_tokens)"
    assert llm_server.info_requests == []
    assert not tracker.learn_from_overflow(2048)
    assert tracker.guess_notice() is None


async def test_a_slow_server_does_not_hold_the_first_request(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer, tmp_path: Path
) -> None:
    """`settle` returns the guess when the answer is late; the answer still lands later."""
    llm_server.info["/props"] = Info(LLAMA_SERVER_PROPS, delay=0.5)
    changes: list[ContextWindow] = []
    tracker = tracker_for(
        provider, "tiny", WindowCache(tmp_path / "w.json"), on_change=changes.append
    )
    window = await tracker.settle(wait=0)
    assert window.source is WindowSource.GUESSED and changes == []
    assert tracker.asking and tracker.guess_notice() is None  # not a guess yet: still asking
    assert (await tracker.settle(wait=30)).tokens == 4096 and len(changes) == 1
    await tracker.aclose()


async def test_a_guess_is_said_once(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer, tmp_path: Path
) -> None:
    tracker = tracker_for(provider, "tiny", WindowCache(tmp_path / "w.json"))
    window = await tracker.settle(wait=30)
    assert window == ContextWindow(32768, WindowSource.GUESSED)
    assert window.describe() == "32,768 tokens, guessed from the model name"
    notice = tracker.guess_notice()
    assert notice is not None and "guess" in notice and "context.max_tokens" in notice
    assert tracker.guess_notice() is None


async def test_an_overflow_error_teaches_the_window(
    provider: OpenAICompatibleProvider, tmp_path: Path
) -> None:
    cache = WindowCache(tmp_path / "w.json")
    changes: list[ContextWindow] = []
    tracker = tracker_for(provider, "tiny", cache, on_change=changes.append)
    await tracker.settle(wait=30)
    assert tracker.learn_from_overflow(2048)
    assert changes == [ContextWindow(2048, WindowSource.OVERFLOW)]
    assert not tracker.learn_from_overflow(2048)  # nothing new
    assert tracker_for(provider, "tiny", cache).current == ContextWindow(
        2048, WindowSource.OVERFLOW
    )
