"""What every provider shares whatever its wire format: its model, its server, a `repr` that
never shows the key, and `async with` closing what it owns (`aclose`)."""

from __future__ import annotations

from typing import Self


class ProviderIdentity:
    """Base of the providers: subclasses set `_model`, `_base_url`, `_api_key` and define
    `aclose`."""

    _model: str
    _base_url: str
    _api_key: str

    @property
    def model(self) -> str:
        """The model name sent with every request."""
        return self._model

    @property
    def base_url(self) -> str:
        """The server's base URL (without a trailing slash)."""
        return self._base_url

    def __repr__(self) -> str:
        key = "<set>" if self._api_key else "<none>"
        return (
            f"{type(self).__name__}(model={self._model!r}, base_url={self._base_url!r}, "
            f"api_key={key})"
        )

    async def aclose(self) -> None:
        """Close what this provider owns (its subclass says what)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
