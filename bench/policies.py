"""The context policies the replay compares, each turning a session's history into a request.

`none`, `masking`, `summarize-at-90` and `eager` are small baselines written here; `forge` is
Forge's real `Manager`, used only through its public API (`evaluate_and_summarize`,
`record_usage`, `max_tokens`) so the replay follows the engine as it changes. A forge variant
is named `forge:key=value,key=value`, each key a `ContextSettings` field (`summarizer.key` for
the summarizer section); `max_tokens` is set by the budget.

Every policy that summarizes asks the same loopback summarizer, through a real
`OpenAICompatibleProvider` on the summarization model.
"""

from __future__ import annotations

import asyncio
import json
import typing
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bench.prices import ANTHROPIC_MAIN, CACHE_WRITE_MULTIPLIER, MAIN
from bench.sessions import Session
from forge.config.settings import ContextSettings
from forge.context.cache_pricing import BREAKPOINT_LOOKBACK, NO_CACHE, CachePricing
from forge.context.conversation import Conversation
from forge.context.events import SummarizationCompleted
from forge.context.manager import Manager
from forge.llm.messages import Message, MessageKind
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.protocols import TokenCounter

MASKING_KEEP = 10
"""Tool outputs the masking policy keeps verbatim (the newest ones)."""
SUMMARIZE_AT = 0.9
"""Share of the budget at which `summarize-at-90` summarizes."""
SUMMARIZE_KEEP = 20
"""Newest messages `summarize-at-90` keeps verbatim."""
EAGER_AGE = 20
"""Messages after a tool-call group at which `eager` summarizes it."""
BASELINES = (
    "none",
    "masking",
    "masking-3",
    "masking-5",
    "masking-fit",
    "summarize-at-90",
    "eager",
    "codex",
    "codex-scaled",
    "claude-code",
    "openhands",
    "openhands-100",
    "gemini-cli",
    "opencode",
)
"""`masking` keeps 10 outputs (its name predates `masking-3`/`masking-5`); `masking-fit` is
masking-10 held to the budget (issue 23's loss comparator among policies that fit); from
`codex` on, the peers' policies (`bench.peer_policies`, `bench.gemini_cli_policy`,
`bench.opencode_policy`; sources in bench/README.md)."""
DEFAULT_POLICIES = (*BASELINES, "forge", "forge@anthropic")
"""`forge` runs with the OpenAI-style model's cache prices, `forge@anthropic` with the
Anthropic-style one's: each is Forge as a session on that provider's model would run."""
SUMMARY_SYSTEM_PROMPT = (
    "You write the working memory of a coding agent. Summarize the material, keeping file "
    "paths, commands, errors and decisions exactly."
)
SUMMARY_HEADING = "[Summary of earlier work]"
TOOL_SUMMARY_HEADING = "[Summary of earlier tool calls]"


def placeholder_text(message: Message) -> str:
    """What `masking` sends instead of an old tool output."""
    lines = message.content.count("\n") + 1 if message.content else 0
    return f"[Old tool output omitted: {lines} lines]"


def render(messages: Sequence[Message]) -> str:
    """Messages as summary material: role, content and tool calls, one block per message."""
    blocks = []
    for message in messages:
        text = f"{message.role}: {message.content}"
        for call in message.tool_calls:
            text += f"\n[call {call.name} {call.arguments}]"
        blocks.append(text)
    return "\n\n".join(blocks)


class Summarizer:
    """The baselines' summary calls: one request per summary, material in `<material>` tags."""

    def __init__(self, provider: OpenAICompatibleProvider) -> None:
        self.provider = provider

    async def summarize(self, material: str) -> str:
        """The summarization model's answer for `material`."""
        request = [
            Message(role="system", content=SUMMARY_SYSTEM_PROMPT),
            Message(
                role="user",
                content=f"Summarize the material below.\n\n<material>\n{material}\n</material>",
            ),
        ]
        completion = await self.provider.complete(request)
        return completion.message.content


@dataclass
class PolicyContext:
    """What a policy may use: the session (for message kinds), the budget, the request
    measure (tokens including tool definitions) and the summarizer."""

    session: Session
    budget: int
    measure: Callable[[Sequence[Message]], int]
    summarizer: Summarizer
    count: Callable[[str], int] = field(default=lambda text: (len(text) + 3) // 4)
    """A text's tokens (the replay passes o200k_base's count; the default approximates)."""


class Policy(Protocol):
    """Turns the history so far (a prefix of the session) into the request to send."""

    name: str

    async def prepare(self, history: Sequence[Message]) -> list[Message]:
        """The messages to send before the next assistant message."""
        ...

    def sent(self, prompt_tokens: int) -> None:
        """The request just prepared was sent and counted `prompt_tokens` tokens."""
        ...

    async def aclose(self) -> None:
        """Release what the policy holds."""
        ...


class _Baseline:
    name = ""

    def __init__(self, context: PolicyContext) -> None:
        self.context = context

    def sent(self, prompt_tokens: int) -> None:
        """Baselines do not use the reported size."""

    async def aclose(self) -> None:
        """Nothing to release."""


class NonePolicy(_Baseline):
    """Everything sent as is."""

    name = "none"

    async def prepare(self, history: Sequence[Message]) -> list[Message]:
        """The whole history."""
        return list(history)


class MaskingPolicy(_Baseline):
    """Tool outputs older than the newest `MASKING_KEEP` replaced by a one-line placeholder."""

    name = "masking"

    def __init__(
        self, context: PolicyContext, keep: int = MASKING_KEEP, name: str = "masking"
    ) -> None:
        super().__init__(context)
        self.name = name
        self.keep = keep
        self._placeholders: dict[int, Message] = {}

    def _placeholder(self, index: int, message: Message) -> Message:
        known = self._placeholders.get(index)
        if known is None:
            known = self._placeholders[index] = Message(
                role=message.role,
                content=placeholder_text(message),
                tool_call_id=message.tool_call_id,
                name=message.name,
            )
        return known

    async def prepare(self, history: Sequence[Message]) -> list[Message]:
        """The history with old tool outputs masked."""
        session = self.context.session
        outputs = [index for index in range(len(history)) if session.is_tool_output(index)]
        masked = set(outputs[: max(0, len(outputs) - self.keep)])
        return [
            self._placeholder(index, message) if index in masked else message
            for index, message in enumerate(history)
        ]


class MaskingFitPolicy(MaskingPolicy):
    """masking-10 held to the budget: while the request is above it, one more of the kept
    outputs (the oldest first) is masked too, down to none kept. What masking-10 would lose if
    it had to fit, the comparator for referenced-output loss among policies with 0 requests
    over budget (issue 23)."""

    def __init__(self, context: PolicyContext) -> None:
        super().__init__(context, keep=MASKING_KEEP, name="masking-fit")

    async def prepare(self, history: Sequence[Message]) -> list[Message]:
        """The history with old tool outputs masked, then more until it fits the budget."""
        keep = self.keep
        while True:
            self.keep = keep
            request = await super().prepare(history)
            if keep == 0 or self.context.measure(request) <= self.context.budget:
                self.keep = MASKING_KEEP
                return request
            keep -= 1


class SummarizeAt90Policy(_Baseline):
    """At 90 % of the budget, one summary of everything but the user instructions and the
    newest `SUMMARIZE_KEEP` messages (the previous summary included)."""

    name = "summarize-at-90"

    def __init__(self, context: PolicyContext) -> None:
        super().__init__(context)
        self.covered = -1
        """History messages [lead, covered) are summarized (-1: not set yet)."""
        self.summary = ""
        self._summary_message: Message | None = None

    @staticmethod
    def _lead(history: Sequence[Message]) -> int:
        return 1 if history and history[0].role == "system" else 0

    def _build(self, history: Sequence[Message]) -> list[Message]:
        lead = self._lead(history)
        covered = max(self.covered, lead)
        instructions = self.context.session.instructions
        kept = [history[index] for index in range(lead, covered) if index in instructions]
        summary = [self._summary_message] if self._summary_message is not None else []
        return [*history[:lead], *kept, *summary, *history[covered:]]

    async def prepare(self, history: Sequence[Message]) -> list[Message]:
        """The history, summarized first when it reached 90 % of the budget."""
        request = self._build(history)
        if self.context.measure(request) < SUMMARIZE_AT * self.context.budget:
            return request
        lead = self._lead(history)
        covered = max(self.covered, lead)
        end = len(history) - SUMMARIZE_KEEP
        while end > covered and history[end].role == "tool":
            end -= 1  # never separate tool results from their call
        if end <= covered:
            return request
        instructions = self.context.session.instructions
        stretch = [history[i] for i in range(covered, end) if i not in instructions]
        material = render(stretch)
        if self.summary:
            material = f"{SUMMARY_HEADING}\n{self.summary}\n\n{material}"
        self.summary = await self.context.summarizer.summarize(material)
        self._summary_message = Message(role="user", content=f"{SUMMARY_HEADING}\n{self.summary}")
        self.covered = end
        return self._build(history)


def tool_groups(session: Session, history: Sequence[Message]) -> list[tuple[int, int]]:
    """(first, last) indices of each complete tool-call group in the history: an assistant
    message with calls and all their results, or (text-action agents) an assistant message and
    the observation right after it."""
    groups = []
    for index, message in enumerate(history):
        if message.role != "assistant":
            continue
        if message.tool_calls:
            waiting = {call.id for call in message.tool_calls}
            end = index
            while end + 1 < len(history) and history[end + 1].role == "tool":
                end += 1
                waiting.discard(history[end].tool_call_id or "")
            if not waiting:
                groups.append((index, end))
        elif index + 1 < len(history) and index + 1 in session.observations:
            groups.append((index, index + 1))
    return groups


class EagerPolicy(_Baseline):
    """Each tool-call group summarized as soon as `EAGER_AGE` messages follow it."""

    name = "eager"

    def __init__(self, context: PolicyContext, age: int = EAGER_AGE) -> None:
        super().__init__(context)
        self.age = age
        self._summaries: dict[int, tuple[int, Message]] = {}

    async def prepare(self, history: Sequence[Message]) -> list[Message]:
        """The history with every old enough group replaced by its summary."""
        due = [
            (first, last)
            for first, last in tool_groups(self.context.session, history)
            if len(history) - 1 - last >= self.age and first not in self._summaries
        ]
        texts = await asyncio.gather(
            *(self.context.summarizer.summarize(render(history[a : b + 1])) for a, b in due)
        )
        for (first, last), text in zip(due, texts, strict=True):
            summary = Message(role="assistant", content=f"{TOOL_SUMMARY_HEADING}\n{text}")
            self._summaries[first] = (last, summary)
        request: list[Message] = []
        index = 0
        while index < len(history):
            if index in self._summaries:
                last, summary = self._summaries[index]
                request.append(summary)
                index = last + 1
                continue
            request.append(history[index])
            index += 1
        return request


class ForgePolicy:
    """Forge's `Manager`, fed the session one message at a time as the agent loop feeds it."""

    def __init__(
        self,
        name: str,
        settings: ContextSettings,
        provider: OpenAICompatibleProvider,
        counter: TokenCounter,
        *,
        context_window: int,
        summarization_model: str,
        observations: frozenset[int] = frozenset(),
        pricing: CachePricing = NO_CACHE,
    ) -> None:
        self.name = name
        self.provider = provider
        self.observations = observations
        """Indices of the session's text-action observations."""
        self.conversation = Conversation()
        self.runs: Counter[str] = Counter()
        """Completed runs that changed something, by strategy."""
        self.manager = Manager(
            settings,
            provider,
            counter,
            context_window=context_window,
            summarization_model=summarization_model,
            emit=self._on_event,
        )
        self.manager.set_cache_pricing(pricing)
        self._appended = 0

    @property
    def max_tokens(self) -> int:
        """The Manager's prompt budget."""
        return self.manager.max_tokens

    async def prepare(self, history: Sequence[Message]) -> list[Message]:
        """Append what is new, let the Manager act, and send what it keeps."""
        for index in range(self._appended, len(history)):
            self.conversation.append(self._as_forge_keeps_it(index, history[index]))
        self._appended = len(history)
        await self.manager.evaluate_and_summarize(self.conversation)
        return list(self.conversation.messages)

    def _on_event(self, event: object) -> None:
        if isinstance(event, SummarizationCompleted) and event.items:
            self.runs[event.strategy] += 1

    def _as_forge_keeps_it(self, index: int, message: Message) -> Message:
        """A text-action observation is a user-role message that carries output: Forge knows
        it as `MessageKind.OBSERVATION` (the same wire message, not an instruction). It keeps
        the session message's id, so a recall key Forge prints names the session's message
        (bench/recall_keys.py)."""
        if index not in self.observations:
            return message
        return message.evolve(kind=MessageKind.OBSERVATION)

    def sent(self, prompt_tokens: int) -> None:
        """Report the request's size as a server would (tool definitions included)."""
        self.manager.record_usage(prompt_tokens, self.conversation)

    async def aclose(self) -> None:
        """Close the provider's HTTP client."""
        await self.provider.aclose()


# ---------------------------------------------------------------------------------------------
# Names


CACHE_PRICES = ("openai", "anthropic", "none")
"""The cache prices a forge policy is told (`forge@anthropic`): the replay's OpenAI-style model
(`openai`, the default), its Anthropic-style model, or none (every rewrite free: Forge before
price-aware masking)."""


@dataclass(frozen=True)
class PolicySpec:
    """A parsed policy name: a baseline, or `forge` with settings overrides."""

    name: str
    kind: str
    overrides: dict[str, Any] = field(default_factory=dict)
    cache: str = "openai"
    """For `forge`: which price model's cache prices its manager is given (`CACHE_PRICES`),
    as a session fills them from its model's prices."""


def cache_pricing(cache: str) -> CachePricing:
    """The `CachePricing` a forge policy's manager gets for `cache` (`CACHE_PRICES`)."""
    if cache == "anthropic":
        return CachePricing.from_prices(
            ANTHROPIC_MAIN.input,
            ANTHROPIC_MAIN.cached_input,
            ANTHROPIC_MAIN.input * CACHE_WRITE_MULTIPLIER,
            lookback=BREAKPOINT_LOOKBACK,
        )
    if cache == "openai":
        return CachePricing.from_prices(MAIN.input, MAIN.cached_input, MAIN.cache_write)
    return NO_CACHE


def _parse_value(raw: str, annotation: Any) -> Any:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    if typing.get_origin(annotation) is list and not isinstance(value, list):
        value = [part for part in raw.split(";") if part]
    return value


def _field_annotation(model: type[Any], key: str, spec: str) -> Any:
    fields = model.model_fields
    if key not in fields:
        known = ", ".join(sorted(fields))
        raise ValueError(f"policy {spec!r}: unknown setting {key!r} (known: {known})")
    return fields[key].annotation


def parse_policy(spec: str) -> PolicySpec:
    """A baseline (`none`, `masking`, ...), `forge` or `forge:key=value,...`, each forge name
    optionally with `@openai`, `@anthropic` or `@none` after `forge` (the cache prices its
    manager is given; `@openai` by default); `ValueError` for anything else, an unknown key,
    `max_tokens` or an invalid value."""
    name = spec.strip()
    if name in BASELINES:
        return PolicySpec(name, name)
    kind, _, options = name.partition(":")
    kind, at, cache = kind.partition("@")
    if at and cache not in CACHE_PRICES:
        raise ValueError(f"policy {spec!r}: cache prices {cache!r}, choose from {CACHE_PRICES}")
    cache = cache or "openai"
    if kind == "forge" and not options:
        return PolicySpec(name, "forge", cache=cache)
    if kind != "forge" or not options:
        raise ValueError(f"unknown policy {spec!r}; choose from {', '.join(DEFAULT_POLICIES)}")
    overrides: dict[str, Any] = {}
    for item in options.split(","):
        key, equals, raw = item.partition("=")
        key = key.strip()
        if not equals or not key:
            raise ValueError(f"policy {spec!r}: {item!r} is not key=value")
        if key == "max_tokens":
            raise ValueError(f"policy {spec!r}: max_tokens is set by --budget")
        section, dot, inner = key.partition(".")
        if dot:
            if section != "summarizer":
                raise ValueError(f"policy {spec!r}: unknown setting {key!r}")
            summarizer_model = typing.cast(
                type[Any], ContextSettings.model_fields["summarizer"].annotation
            )
            annotation = _field_annotation(summarizer_model, inner, spec)
            overrides.setdefault("summarizer", {})[inner] = _parse_value(raw, annotation)
        else:
            annotation = _field_annotation(ContextSettings, key, spec)
            overrides[key] = _parse_value(raw, annotation)
    forge_settings(PolicySpec(name, "forge", overrides), 10_000)  # invalid values fail now
    return PolicySpec(name, "forge", overrides, cache)


def forge_settings(spec: PolicySpec, budget: int | None) -> ContextSettings:
    """The `ContextSettings` of a forge policy at `budget` (None: the model's default)."""
    try:
        return ContextSettings.model_validate({**spec.overrides, "max_tokens": budget})
    except ValueError as error:
        raise ValueError(f"policy {spec.name!r}: {error}") from None


def baseline(spec: PolicySpec, context: PolicyContext) -> Policy:
    """The baseline policy named by `spec`."""
    from bench.gemini_cli_policy import GeminiCliPolicy
    from bench.opencode_policy import OpenCodePolicy
    from bench.peer_policies import (
        OPENHANDS_CONFIG_KEEP_FIRST,
        OPENHANDS_CONFIG_MAX_SIZE,
        ClaudeCodePolicy,
        CodexPolicy,
        OpenHandsPolicy,
    )

    classes: dict[str, Callable[[PolicyContext], Policy]] = {
        "none": NonePolicy,
        "masking": MaskingPolicy,
        "masking-3": lambda context: MaskingPolicy(context, keep=3, name="masking-3"),
        "masking-5": lambda context: MaskingPolicy(context, keep=5, name="masking-5"),
        "masking-fit": MaskingFitPolicy,
        "summarize-at-90": SummarizeAt90Policy,
        "eager": EagerPolicy,
        "codex": CodexPolicy,
        "codex-scaled": lambda context: CodexPolicy(context, scaled=True),
        "claude-code": ClaudeCodePolicy,
        "openhands": OpenHandsPolicy,
        "openhands-100": lambda context: OpenHandsPolicy(
            context, OPENHANDS_CONFIG_MAX_SIZE, OPENHANDS_CONFIG_KEEP_FIRST, "openhands-100"
        ),
        "gemini-cli": GeminiCliPolicy,
        "opencode": OpenCodePolicy,
    }
    return classes[spec.kind](context)
