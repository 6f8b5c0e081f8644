"""A replay run's prompt costs under both cache price models, with and without re-fetches.

`CostMeter.request` is called once per agent request with its segments and the referenced
outputs it lost (`bench.fidelity`). For the OpenAI-style model a request's cached part is its
common prefix with the previous request (`bench.cache_model.cached_tokens`); for the
Anthropic-style model `bench.anthropic_cache.AnthropicCache` charges reads, writes and plain
input. **Recall**: for each lost referenced output, one extra request at that point: the
request's context plus the re-fetch (a `Refetch`: the call that fetches the output and its
result, as the replay builds them, or a bare output segment), costed against the cache state of
that moment (the request just sent is cached as it would be; the extra request changes nothing
for later ones). The call's own tokens are billed as output (the reply that asked for it); the
extra request's reply is the message the session already counts.
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


@dataclass(frozen=True)
class Refetch:
    """What fetching one lost output again adds: messages before the reply priming (the
    fetching call and its result) and the output tokens of that call."""

    segments: tuple[Segment, ...]
    output_tokens: int = 0


class CostMeter:
    """Prompt tokens of one replay run, request by request."""

    def __init__(self) -> None:
        self.agent = Tokens()
        self.recall = Tokens()
        """The extra re-fetch requests only."""
        self.recall_requests = 0
        self.recall_output_tokens = 0
        """Output tokens of the calls that asked for the re-fetches."""
        self._previous: Sequence[Segment] | None = None
        self._anthropic = AnthropicCache()

    def request(
        self,
        segments: Sequence[Segment],
        has_system: bool,
        lost_outputs: Sequence[Segment | Refetch] = (),
        roles: Sequence[str] | None = None,
    ) -> int:
        """Bill one agent request and its re-fetches (a bare segment: the output as one more
        message); returns its OpenAI-cached tokens."""
        size = prompt_tokens(segments)
        hit = cached_tokens(common_prefix(self._previous, segments)) if self._previous else 0
        charge = self._anthropic.charge(segments, has_system, roles)
        self.agent.add(_tokens(size, hit, charge))
        self._previous = segments
        for lost in lost_outputs:
            refetch = lost if isinstance(lost, Refetch) else Refetch((lost,))
            extra = [*segments[:-1], *refetch.segments, segments[-1]]
            extra_hit = cached_tokens(common_prefix(segments, extra))
            added = ["assistant", "tool"] if len(refetch.segments) == 2 else ["tool"]
            extra_roles = None if roles is None else [*roles, *added[-len(refetch.segments) :]]
            extra_charge = self._anthropic.peek(extra, has_system, extra_roles)
            self.recall.add(_tokens(prompt_tokens(extra), extra_hit, extra_charge))
            self.recall_output_tokens += refetch.output_tokens
            self.recall_requests += 1
        return hit

    def costs(self, agent_output: int, summary_input: int, summary_output: int) -> dict[str, float]:
        """Dollars under both models, without and with the re-fetches."""
        result = {}
        for name, parts in (("", (self.agent,)), ("recall_", (self.agent, self.recall))):
            total = Tokens()
            for part in parts:
                total.add(part)
            output = agent_output + (self.recall_output_tokens if name else 0)
            result[f"{name}cost_usd_openai"] = session_cost(
                uncached_prompt=total.openai_uncached,
                cached_prompt=total.openai_cached,
                agent_output=output,
                summary_input=summary_input,
                summary_output=summary_output,
            )
            result[f"{name}cost_usd_anthropic"] = anthropic_cost(
                read=total.anthropic_read,
                written=total.anthropic_written,
                uncached=total.anthropic_uncached,
                agent_output=output,
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
