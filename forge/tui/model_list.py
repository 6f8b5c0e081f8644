"""The models an OpenAI-compatible server offers (`GET /v1/models`), for `/model` without a
name. httpx is imported when asked, not at start-up."""

from __future__ import annotations

MODEL_LIST_TIMEOUT = 5.0
"""Seconds to wait for the server's list before saying it did not answer."""


class ModelListError(Exception):
    """The server's model list could not be read; the message says why, in words."""


async def fetch_model_ids(
    base_url: str, api_key: str, *, wait_seconds: float = MODEL_LIST_TIMEOUT
) -> list[str]:
    """The ids of the models at `base_url` (sorted); raises ModelListError when the server
    cannot be reached, refuses, or answers something that is not a model list."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = base_url.rstrip("/") + "/models"
    try:
        async with httpx.AsyncClient(timeout=wait_seconds) as client:
            response = await client.get(url, headers=headers)
    except httpx.HTTPError as error:
        raise ModelListError(f"could not reach {url} ({type(error).__name__})") from error
    if response.status_code != 200:
        raise ModelListError(f"{url} answered HTTP {response.status_code}")
    try:
        data = response.json().get("data")
        ids = sorted({str(item["id"]) for item in data})
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise ModelListError(f"{url} did not answer with a model list") from error
    return ids
