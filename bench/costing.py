"""A replay run's prompt costs under both cache price models, with and without re-fetches.

`CostMeter.request` is called once per agent request with its segments and the referenced
outputs it lost (`bench.fidelity`). For the OpenAI-style model a request's cached part is its
common prefix with the previous request (`bench.cache_model.cached_tokens`); for the
Anthropic-style model `bench.anthropic_cache.AnthropicCache` charges reads, writes and plain
input. **Recall**: for each lost referenced output, one extra request at that point: the
request's context plus the output as one more message (`RequestTokenizer.message`, framing
included), costed against the cache state of that moment (the request just sent is cached as
it would be; the extra request changes nothing for later ones). Its reply (a tool call) is not
counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench.anthropic_cache import AnthropicCache, Charge
from bench.cache_model import Segment, cached_tokens, common_prefix, prompt_tokens
from bench.prices import anthropic_cost, session_cost


@dataclass
class Tokens:
    """Prompt tokens by how each price model bills them."""

    openai_uncached: int = 0
    openai_cached: int = 0
    anthropic_read: int = 0
    anthropic_written: int = 0
    anthropic_uncached: int = 0

    def add(self, other: Tokens) -> None:
        """Add `other` to these."""
        self.openai_uncached += other.openai_uncached
        self.openai_cached += other.openai_cached
        self.anthropic_read += other.anthropic_read
        self.anthropic_written += other.anthropic_written
        self.anthropic_uncached += other.anthropic_uncached


class CostMeter:
    """Prompt tokens of one replay run, request by request."""

    def __init__(self) -> None:
        self.agent = Tokens()
        self.recall = Tokens()
        """The extra re-fetch requests only."""
        self.recall_requests = 0
        self._previous: Sequence[Segment] | None = None
        self._anthropic = AnthropicCache()

    def request(
        self,
        segments: Sequence[Segment],
        has_system: bool,
        lost_outputs: Sequence[Segment] = (),
        roles: Sequence[str] | None = None,
    ) -> int:
        """Bill one agent request and its re-fetches; returns its OpenAI-cached tokens."""
        size = prompt_tokens(segments)
        hit = cached_tokens(common_prefix(self._previous, segments)) if self._previous else 0
        charge = self._anthropic.charge(segments, has_system, roles)
        self.agent.add(_tokens(size, hit, charge))
        self._previous = segments
        for output in lost_outputs:
            extra = [*segments[:-1], output, segments[-1]]
            extra_hit = cached_tokens(common_prefix(segments, extra))
            extra_roles = None if roles is None else [*roles, "tool"]
            extra_charge = self._anthropic.peek(extra, has_system, extra_roles)
            self.recall.add(_tokens(prompt_tokens(extra), extra_hit, extra_charge))
            self.recall_requests += 1
        return hit

    def costs(self, agent_output: int, summary_input: int, summary_output: int) -> dict[str, float]:
        """Dollars under both models, without and with the re-fetches."""
        result = {}
        for name, parts in (("", (self.agent,)), ("recall_", (self.agent, self.recall))):
            total = Tokens()
            for part in parts:
                total.add(part)
            result[f"{name}cost_usd_openai"] = session_cost(
                uncached_prompt=total.openai_uncached,
                cached_prompt=total.openai_cached,
                agent_output=agent_output,
                summary_input=summary_input,
                summary_output=summary_output,
            )
            result[f"{name}cost_usd_anthropic"] = anthropic_cost(
                read=total.anthropic_read,
                written=total.anthropic_written,
                uncached=total.anthropic_uncached,
                agent_output=agent_output,
                summary_input=summary_input,
                summary_output=summary_output,
            )
        return result


def _tokens(size: int, openai_cached: int, charge: Charge) -> Tokens:
    return Tokens(
        openai_uncached=size - openai_cached,
        openai_cached=openai_cached,
        anthropic_read=charge.read,
        anthropic_written=charge.written,
        anthropic_uncached=charge.uncached,
    )
