"""The models a provider's server offers (`GET /v1/models`), for `/model` without a name.

Each provider asks through its own client and authentication (`list_models`); this module
holds what they share: the error a client shows and the reading of the answer.
"""

from __future__ import annotations

from typing import Any

MODEL_LIST_TIMEOUT = 5.0
"""Seconds to wait for the server's list before saying it did not answer."""


class ModelListError(Exception):
    """The server's model list could not be read; the message says why, in words."""


def model_ids(body: Any, url: str) -> list[str]:
    """The sorted ids of an OpenAI-style model list (`{"data": [{"id": ...}, ...]}`);
    ModelListError naming `url` when `body` is not one."""
    try:
        data = body.get("data")
        return sorted({str(item["id"]) for item in data})
    except (TypeError, KeyError, AttributeError) as error:
        raise ModelListError(f"{url} did not answer with a model list") from error
