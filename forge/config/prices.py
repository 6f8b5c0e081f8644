"""Model prices: the built-in table, the `prices` config entries over it, and lookup by name.

Prices are US dollars per million tokens: `input` (prompt tokens not served from the
provider's cache), `cached_input` (prompt tokens the server reports as cached,
`prompt_tokens_details.cached_tokens`, or Anthropic's cache reads), `cache_write` (prompt tokens
written to the cache: Anthropic's `cache_creation_input_tokens`, 1.25 x input for its 5-minute
cache) and `output` (completion tokens, reasoning included).
The same table costs the app's sessions (`forge.agent.costs`) and the benchmark's replays
(`bench.prices`).

Lookup (`PriceTable.lookup`): the exact name; else the name without a provider prefix
("openai/gpt-4o" → "gpt-4o"); else the name without a date or version suffix
("gpt-4o-2024-08-06", "gpt-4-0613", "gpt-4o-mini-latest" → their base name). Nothing else: a model
the table does not list has no price, and Forge shows "unknown" rather than a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import ConfigDict, NonNegativeFloat

from forge.config.field_docs import DocumentedModel

PER_MILLION = 1_000_000

_DATED_SUFFIX = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{4}|\d{8}|latest)$")
"""A release suffix: -2024-08-06, -0613, -20250514, -latest."""


@dataclass(frozen=True)
class ModelPrice:
    """What one model charges, in dollars per million tokens."""

    model: str
    input: float
    cached_input: float
    output: float
    cache_write: float | None = None
    """Price of prompt tokens written to the cache; None: the `input` price."""

    @property
    def cache_write_price(self) -> float:
        """What a token written to the cache costs (the input price when none is listed)."""
        return self.input if self.cache_write is None else self.cache_write

    def cost(self, uncached: int, cached: int, output: int, cache_written: int = 0) -> float:
        """Dollars for `uncached` + `cached` + `cache_written` prompt tokens and `output`
        completion tokens; never below 0 (counts are checked before they get here:
        docs/adr/0036)."""
        # Clamped, so no count can overflow a float (a 400-digit int would) or go negative.
        counts = (_clamped(uncached), _clamped(cached), _clamped(cache_written), _clamped(output))
        rates = (self.input, self.cached_input, self.cache_write_price, self.output)
        return sum(float(count) * rate for count, rate in zip(counts, rates, strict=True)) / (
            PER_MILLION
        )


def _clamped(count: int) -> int:
    return min(max(0, count), _MAX_PRICED_TOKENS)


_MAX_PRICED_TOKENS = 10**18


class ModelPriceSettings(DocumentedModel):
    """One model's prices in the config file, dollars per million tokens."""

    model_config = ConfigDict(extra="ignore")

    input: NonNegativeFloat
    """Prompt tokens not served from the cache."""
    cached_input: NonNegativeFloat | None = None
    """Prompt tokens served from the provider's cache (empty: the `input` price)."""
    output: NonNegativeFloat
    """Completion tokens (reasoning tokens included)."""
    cache_write: NonNegativeFloat | None = None
    """Prompt tokens written to the provider's cache (Anthropic; empty: the `input` price)."""


def _claude(model: str, input_price: float, output_price: float) -> tuple[ModelPrice, ...]:
    """A Claude model's prices from its input and output prices (Anthropic's ratios)."""
    return (
        ModelPrice(
            model,
            input=input_price,
            cached_input=round(input_price * 0.1, 6),
            output=output_price,
            cache_write=round(input_price * 1.25, 6),
        ),
    )


DEFAULT_PRICES: Mapping[str, ModelPrice] = {
    price.model: price
    for price in (
        # OpenAI's published list prices (standard tier), checked 2026-11.
        ModelPrice("gpt-4o", input=2.50, cached_input=1.25, output=10.00),
        ModelPrice("gpt-4o-mini", input=0.15, cached_input=0.075, output=0.60),
        ModelPrice("gpt-4.1", input=2.00, cached_input=0.50, output=8.00),
        ModelPrice("gpt-4.1-mini", input=0.40, cached_input=0.10, output=1.60),
        ModelPrice("gpt-4.1-nano", input=0.10, cached_input=0.025, output=0.40),
        ModelPrice("o3", input=2.00, cached_input=0.50, output=8.00),
        ModelPrice("o4-mini", input=1.10, cached_input=0.275, output=4.40),
        ModelPrice("gpt-5", input=1.25, cached_input=0.125, output=10.00),
        ModelPrice("gpt-5-mini", input=0.25, cached_input=0.025, output=2.00),
        ModelPrice("gpt-5-nano", input=0.05, cached_input=0.005, output=0.40),
        # Anthropic's list prices: cache reads 0.1 x input, 5-minute cache writes 1.25 x input
        # (a 1-hour cache writes at 2 x input: list it under `prices:` with that cache_write).
        *_claude("claude-opus-4-6", 5.00, 25.00),
        *_claude("claude-opus-4-5", 5.00, 25.00),
        *_claude("claude-opus-4-1", 15.00, 75.00),
        *_claude("claude-opus-4", 15.00, 75.00),
        *_claude("claude-sonnet-4-6", 3.00, 15.00),
        *_claude("claude-sonnet-4-5", 3.00, 15.00),
        *_claude("claude-sonnet-4", 3.00, 15.00),
        *_claude("claude-3-7-sonnet", 3.00, 15.00),
        *_claude("claude-haiku-4-5", 1.00, 5.00),
        *_claude("claude-3-5-haiku", 0.80, 4.00),
    )
}
"""The built-in prices; `prices` entries in the config file add models or replace these."""


class PriceTable:
    """Prices by model name, with the lookup described in the module docstring."""

    def __init__(self, prices: Mapping[str, ModelPrice]) -> None:
        self._prices = dict(prices)

    def __contains__(self, model: object) -> bool:
        return isinstance(model, str) and self.lookup(model) is not None

    def lookup(self, model: str) -> ModelPrice | None:
        """The price of `model`, or None when the table does not list it."""
        name = model.strip()
        for candidate in _candidates(name):
            price = self._prices.get(candidate)
            if price is not None:
                return price
        return None


def _candidates(name: str) -> list[str]:
    names = [name]
    if "/" in name:
        names.append(name.rsplit("/", 1)[1])
    for base in list(names):
        stripped = _DATED_SUFFIX.sub("", base)
        if stripped != base and stripped:
            names.append(stripped)
    return names


def price_table(configured: Mapping[str, ModelPriceSettings] | None = None) -> PriceTable:
    """The built-in prices with the config's `prices` entries over them."""
    prices = dict(DEFAULT_PRICES)
    for model, entry in (configured or {}).items():
        cached = entry.cached_input if entry.cached_input is not None else entry.input
        prices[model] = ModelPrice(model, entry.input, cached, entry.output, entry.cache_write)
    return PriceTable(prices)
