"""When a tier may rewrite the prompt's prefix unforced: ski rental on the cache prices.

A tier that could shrink the prompt before the budget requires it (masking a batch, compacting
old goals) keeps paying the holding cost of what it could remove (`CachePricing.holding_cost`,
per request) until what it paid reaches the cost of the rewrite (`CachePricing.rewrite_cost`),
and only then rewrites: never more than twice the cost of the best choice made knowing how many
requests are ahead (docs/adr/0038 §8). Under pressure (the threshold, /compact, an overflow) the
tiers do not ask.
"""

from __future__ import annotations

from forge.context.cache_pricing import CachePricing
from forge.context.conversation import Conversation


class RewriteGate:
    """The rent one tier has paid since it could first have rewritten."""

    def __init__(self) -> None:
        self.rent = 0.0
        """Input-price tokens paid for keeping what could have been removed."""
        self._since: int | None = None
        """Requests made when the rent was last accrued (None: nothing removable yet)."""

    def pays(
        self, pricing: CachePricing, saved: int, tail: int, requests: int, extra: float = 0.0
    ) -> bool:
        """Whether to rewrite now: `saved` tokens removable before a `tail` of tokens the
        rewrite un-caches, `requests` made so far in the session, `extra` what making the
        rewrite costs besides (a summary request, in input-price tokens). Always True where
        rewrites need not wait (`CachePricing.rewrites_wait`: prefix caching, no prices)."""
        if not pricing.rewrites_wait:
            return True
        if saved <= 0:
            return False
        if self._since is None:
            self._since = requests
        if requests > self._since:
            self.rent += pricing.holding_cost(saved) * (requests - self._since)
            self._since = requests
        return self.rent >= pricing.rewrite_cost(saved, tail) + extra

    def paid(self) -> None:
        """The rewrite was made (or the conversation started over): start renting afresh."""
        self.rent, self._since = 0.0, None


def rewritten_from(conversation: Conversation, sent: tuple[int, int] | None) -> int | None:
    """The first position rewritten since the request last sent (`sent`: its conversation's
    id and version), or None: nothing rewritten, or unknown. A request will re-write the
    prompt from there anyway, so a tier's rewrite after it costs nothing more (a cut paid
    anyway is a cut to make now)."""
    if sent is None or sent[0] != id(conversation):
        return None
    edits = conversation.edits_since(sent[1])
    if not edits:
        return None
    return min(edit.start for edit in edits)
