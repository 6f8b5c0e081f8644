"""When rewriting the prompt's prefix pays: the main model's cache prices (docs/adr/0038 §8).

A provider's prompt cache bills a request's prefix already cached at the *read* price and the
rest at the input price (automatic prefix caching, OpenAI-style) or, where it is written to the
cache, at the *write* price (breakpoints, Anthropic-style: reads 0.1 x, writes 1.25 x input).
Replacing an old message (masking an output) removes `saved` tokens from every later request,
but everything after it — the `tail` — is no longer cached: the next request pays the write
price for it instead of the read price, once:

    rewrite cost = (tail - saved) x (write - read)
    holding cost = saved x read, per request the outputs stay

How many requests are ahead is unknown, so this is the ski-rental problem: keep paying the
holding cost (rent) until what was paid equals the rewrite cost, then rewrite (buy). That never
costs more than twice the best choice made knowing the future, and needs no estimate of a
session's length (no fitted constant). Prices are ratios to the input price. Without known
prices (`NO_CACHE`: read = write = 1) the rewrite costs nothing extra and is made at once,
Forge's behaviour before this rule.

Where the cache can be read from matters too. Automatic prefix caching finds any cached prefix,
so the tail starts at the rewritten message. Breakpoint caching (Anthropic) looks for a cached
prefix only up to `lookback` blocks before each breakpoint, and Forge's provider puts its
message breakpoints on the newest messages (docs/adr/0037): a rewrite further back than that
un-caches everything after the system prompt.

Tiers wait only under breakpoint caching (`CachePricing.rewrites_wait`): there a masking batch
or a goal batch un-caches the whole prompt at 1.25 x input. Under automatic prefix caching
(gpt-4o: reads 0.5 x, no write premium) waiting cost 0.2-0.6 % more in the replay than masking
at once, so tiers there rewrite as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forge.config.prices import ModelPriceSettings

BREAKPOINT_LOOKBACK = 20
"""Blocks before a breakpoint Anthropic's cache searches for an earlier entry (its documented
lookback); Forge counts messages, each at least one block."""


@dataclass(frozen=True)
class CachePricing:
    """The main model's prompt prices as multiples of its input price."""

    read: float = 1.0
    """A prompt token read from the cache."""
    write: float = 1.0
    """A prompt token written to the cache (the input price where writes cost nothing extra)."""
    lookback: int | None = None
    """Messages before the newest a cached prefix can end and still be found (breakpoint
    caching); None: anywhere (automatic prefix caching)."""

    @classmethod
    def from_prices(
        cls,
        input_price: float,
        cached_input: float | None,
        cache_write: float | None = None,
        *,
        lookback: int | None = None,
    ) -> CachePricing:
        """From dollars per token (any unit): cached reads and cache writes default to the
        input price; a free model (input 0) is taken as uncached."""
        if input_price <= 0:
            return NO_CACHE
        read = input_price if cached_input is None else cached_input
        write = input_price if cache_write is None else cache_write
        return cls(read=read / input_price, write=write / input_price, lookback=lookback)

    @property
    def rewrites_wait(self) -> bool:
        """Whether tiers hold back unforced rewrites (`forge.context.rewrite_gate`): under
        breakpoint caching, where a rewrite further back than the lookback un-caches the
        whole prompt and writes cost more than input. Under automatic prefix caching a
        rewrite costs one uncached pass of the tail; there waiting cost more than it saved
        in the replay (docs/adr/0038 §8; measured again on issue 37's tuning part, where it
        also lost more: docs/adr/0060 §3), so tiers rewrite at once."""
        return self.lookback is not None and self.write > self.read

    def rewrite_start(self, position: int, length: int, head: int) -> int:
        """Where the un-cached tail of a rewrite at `position` starts, in a conversation of
        `length` messages whose first `head` (the system prompt) are cached apart."""
        if self.lookback is not None and length - position > self.lookback:
            return min(position, head)
        return position

    def rewrite_cost(self, saved: int, tail: int) -> float:
        """Input-price tokens a rewrite removing `saved` tokens at a point followed by `tail`
        tokens (the removed ones included) costs beyond keeping them, once."""
        return max(0, tail - saved) * max(0.0, self.write - self.read)

    def holding_cost(self, saved: int) -> float:
        """Input-price tokens keeping `saved` removable tokens costs, per request."""
        return max(0, saved) * self.read


NO_CACHE = CachePricing()
"""Prices unknown, or no prompt cache: a rewrite costs nothing extra."""


def cache_pricing_for(
    provider: str, model: str, prices: Mapping[str, ModelPriceSettings] | None = None
) -> CachePricing:
    """What a session on `model` through `provider` ("openai" or "anthropic") pays, from the
    price table (`prices`: the config file's entries); `NO_CACHE` for a model it does not list."""
    from forge.config.prices import price_table  # the table only when a session is built

    price = price_table(prices).lookup(model)
    if price is None:
        return NO_CACHE
    lookback = BREAKPOINT_LOOKBACK if provider == "anthropic" else None
    return CachePricing.from_prices(
        price.input, price.cached_input, price.cache_write, lookback=lookback
    )
