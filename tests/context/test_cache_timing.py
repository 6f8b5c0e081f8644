"""Price-aware timing (issue 23, docs/adr/0038 §8; issue 37, docs/adr/0050 §3, 0060 §3): under
breakpoint caching (Anthropic) masking and goal batches wait until keeping what they would
remove has cost as much as the rewrite (and, for a goal batch, its summary request); under
automatic prefix caching (OpenAI), or without prices, they rewrite at once; under pressure
nothing waits. Against the loopback server where a summary request is involved."""

from __future__ import annotations

from forge.config.prices import ModelPriceSettings
from forge.config.settings import ContextSettings, LLMSettings, Settings
from forge.context.cache_pricing import (
    BREAKPOINT_LOOKBACK,
    NO_CACHE,
    CachePricing,
    cache_pricing_for,
)
from forge.context.conversation import Conversation
from forge.context.prefix_sums import PrefixSums
from forge.context.rewrite_gate import RewriteGate
from forge.llm.messages import Message, MessageKind, assistant, user
from forge.session.parts import model_cache_pricing
from tests.context.builders import (
    conversation,
    filler,
    group,
    llm_tiers,
    make_manager,
    provider_for,
    task_start,
    words,
)
from tests.support.openai_server import OpenAIServer, Text

ANTHROPIC = CachePricing.from_prices(3.0, 0.3, 3.75, lookback=BREAKPOINT_LOOKBACK)
"""Claude Sonnet through the Anthropic provider: reads 0.1 x, writes 1.25 x, breakpoints."""
GPT_4O = CachePricing.from_prices(2.5, 1.25)
"""gpt-4o through an OpenAI-compatible server: reads 0.5 x, automatic prefix caching."""


def masked(chat: Conversation) -> int:
    return sum(message.kind is MessageKind.PRUNED for message in chat.messages)


async def masking_rounds(
    llm_server: OpenAIServer, pricing: CachePricing, budget: int, rounds: int = 40
) -> tuple[int | None, int, list[int]]:
    """Read `rounds` files of ~300 tokens, one request each; (the round masking first ran,
    outputs it masked then, every request's size)."""
    chat = conversation(task_start())
    sizes: list[int] = []
    first: int | None = None
    first_batch = 0
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, ContextSettings(max_tokens=budget))
        manager.set_cache_pricing(pricing)
        for number in range(rounds):
            path = {"path": f"src/module_{number}.py"}
            for message in group("read_file", words(300, f"r{number:02d}x"), arguments=path):
                chat.append(message)
            await manager.evaluate_and_summarize(chat)
            sizes.append(manager.current_tokens(chat))
            if first is None and masked(chat):
                first, first_batch = number, masked(chat)
    assert llm_server.requests == []  # masking asks no model
    assert chat.is_valid()
    return first, first_batch, sizes


async def test_masking_waits_under_breakpoint_caching_until_keeping_costs_the_rewrite(
    llm_server: OpenAIServer,
) -> None:
    eager, eager_batch, _ = await masking_rounds(llm_server, NO_CACHE, 1_000_000)
    prefix, _, _ = await masking_rounds(llm_server, GPT_4O, 1_000_000)
    waited, waited_batch, _ = await masking_rounds(llm_server, ANTHROPIC, 1_000_000)
    assert eager is not None and eager <= 6  # 3 kept + a batch of 3
    assert prefix == eager  # prefix caching: a batch is masked as soon as it is ready (0060)
    assert waited is not None and waited > eager + 3  # it waited, then masked ...
    assert waited_batch > eager_batch  # ... many outputs in one rewrite


async def test_masking_under_pressure_does_not_wait_for_the_cache(
    llm_server: OpenAIServer,
) -> None:
    budget = 4_000
    waited, _, _ = await masking_rounds(llm_server, ANTHROPIC, 1_000_000, rounds=30)
    first, _, sizes = await masking_rounds(llm_server, ANTHROPIC, budget, rounds=30)
    assert first is not None and waited is not None
    assert first < waited  # the threshold reached: masked before the rent was paid
    assert max(sizes) <= budget  # the budget holds whatever the prices say


def goal_turn(number: int) -> list[object]:
    return [
        user(f"request {number}: rename module m{number} " + words(40, "req")),
        *group("read_file", words(400, "src"), arguments={"path": f"src/m{number}.py"}),
        *group("execute_command", words(300, "tst"), arguments={"command": "pytest -q"}),
        assistant(f"Renamed m{number}; the tests pass."),
    ]


async def test_a_goal_batch_waits_under_breakpoint_caching_and_runs_once_it_pays(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("Renamed modules m1 to m3; tests pass.")
    settings = llm_tiers(tool_call_summaries=False, goal_batch_min_turns=3)

    def chat() -> Conversation:
        turns = [m for n in (1, 2, 3) for m in goal_turn(n)]
        return conversation(task_start(), turns, user("the current request"), filler(24))

    async with provider_for(llm_server) as provider:
        at_once = chat()
        manager = make_manager(provider, settings)
        await manager.evaluate_and_summarize(at_once)  # no prices: compacted now
        assert any(m.kind is MessageKind.GOAL_BATCH for m in at_once.messages)
        requests_then = len(llm_server.requests)
        assert requests_then == 1

        waiting = chat()
        manager = make_manager(provider, settings)
        manager.set_cache_pricing(ANTHROPIC)
        await manager.evaluate_and_summarize(waiting)
        assert len(llm_server.requests) == requests_then  # it waits: no summary request
        for number in range(150):  # the agent goes on; keeping the batch costs rent
            waiting.append(assistant(f"step {number} " + words(30, "stp")))
            waiting.append(user("ok"))
            await manager.evaluate_and_summarize(waiting)
            if any(m.kind is MessageKind.GOAL_BATCH for m in waiting.messages):
                break
        assert any(m.kind is MessageKind.GOAL_BATCH for m in waiting.messages)
        assert number > 0
        assert len(llm_server.requests) == requests_then + 1
        assert waiting.is_valid()


def test_the_rewrite_gate_rents_until_the_rent_paid_reaches_the_rewrite_cost() -> None:
    gate = RewriteGate()
    # 1,000 removable tokens before a 10,000-token tail: the rewrite costs 9,000 x 1.15
    # = 10,350; keeping them costs 100 per request, so about 104 requests of rent.
    cost = ANTHROPIC.rewrite_cost(1_000, 10_000)
    assert round(cost) == 10_350
    assert not gate.pays(ANTHROPIC, 1_000, 10_000, requests=5)  # nothing paid yet
    assert not gate.pays(ANTHROPIC, 1_000, 10_000, requests=100)
    assert gate.pays(ANTHROPIC, 1_000, 10_000, requests=110)
    gate.paid()
    assert not gate.pays(ANTHROPIC, 1_000, 10_000, requests=111)
    assert RewriteGate().pays(GPT_4O, 1_000, 10_000, requests=0)  # prefix caching: no wait
    assert RewriteGate().pays(NO_CACHE, 1_000, 10_000, requests=0)  # no cache: at once
    # A rewrite that costs a summary request besides waits for that too.
    gate = RewriteGate()
    assert gate.pays(ANTHROPIC, 1_000, 10_000, requests=0) is False
    assert not gate.pays(ANTHROPIC, 1_000, 10_000, requests=110, extra=2_000)
    assert gate.pays(ANTHROPIC, 1_000, 10_000, requests=130, extra=2_000)


def test_a_rewrite_beyond_the_lookback_uncaches_everything_after_the_system_prompt() -> None:
    assert ANTHROPIC.rewrite_start(position=50, length=60, head=1) == 50
    assert ANTHROPIC.rewrite_start(position=30, length=60, head=1) == 1
    assert GPT_4O.rewrite_start(position=30, length=60, head=1) == 30


def test_the_session_fills_the_prices_from_the_price_table_and_the_provider() -> None:
    claude = cache_pricing_for("anthropic", "claude-sonnet-4-5")
    assert (round(claude.read, 6), round(claude.write, 6)) == (0.1, 1.25)
    assert claude.lookback == BREAKPOINT_LOOKBACK and claude.rewrites_wait
    gpt = cache_pricing_for("openai", "gpt-4o")
    assert (gpt.read, gpt.write, gpt.lookback) == (0.5, 1.0, None)
    assert not gpt.rewrites_wait  # waiting cost more and lost more on the tuning part (0060)
    assert cache_pricing_for("openai", "my-local-model") == NO_CACHE
    listed = {"my-claude": ModelPriceSettings(input=3, cached_input=0.3, output=15, cache_write=6)}
    assert cache_pricing_for("anthropic", "my-claude", listed).write == 2.0  # a 1-hour cache
    session = Settings(llm=LLMSettings(provider="anthropic", model="claude-sonnet-4-5"))
    assert model_cache_pricing(session).rewrites_wait


def test_prefix_sums_follow_appends_and_replacements() -> None:
    sums = PrefixSums()
    values = [5, 3, 8, 1, 9, 2, 7]
    for value in values:
        sums.append(value)
    sums.set(2, 4)
    values[2] = 4
    assert [sums.prefix(k) for k in range(8)] == [sum(values[:k]) for k in range(8)]
    assert sums.total() == sum(values) and len(sums) == 7
    sums.clear()
    assert sums.total() == 0 and len(sums) == 0


async def test_a_waiting_goal_batch_runs_at_once_when_the_prefix_is_rewritten_anyway(
    llm_server: OpenAIServer,
) -> None:
    """A rewrite since the last request (here an early output cut in place, as the ingest cap
    or masking under pressure do) un-caches the prompt after it for the next request anyway:
    a goal batch after that point costs no cache rewrite, only its summary request, so it
    waits for that alone and runs sooner than the same batch without the cut."""
    llm_server.responder = lambda request: Text("Renamed modules m1 to m3; tests pass.")
    settings = llm_tiers(tool_call_summaries=False, goal_batch_min_turns=3)

    async def rounds_until_batch(cut_each_round: bool) -> int:
        turns = [m for n in (1, 2, 3) for m in goal_turn(n)]
        chat = conversation(task_start(), turns, user("the current request"), filler(24))
        async with provider_for(llm_server) as provider:
            manager = make_manager(provider, settings)
            manager.set_cache_pricing(ANTHROPIC)
            await manager.evaluate_and_summarize(chat)
            for number in range(200):
                chat.append(assistant(f"step {number}"))
                chat.append(user("ok"))
                if cut_each_round:  # an early output rewritten since the last request
                    output = next(i for i, m in enumerate(chat.messages) if m.role == "tool")
                    original = chat[output]
                    cut = Message(
                        role="tool",
                        content=f"[cut {number}]",
                        tool_call_id=original.tool_call_id,
                        name=original.name,
                        replaces=(original.id,),
                    )
                    chat.replace_message(output, cut)
                await manager.evaluate_and_summarize(chat)
                if any(m.kind is MessageKind.GOAL_BATCH for m in chat.messages):
                    assert chat.is_valid()
                    return number
        raise AssertionError("the goal batch never ran")

    assert 0 < await rounds_until_batch(True) < await rounds_until_batch(False)
