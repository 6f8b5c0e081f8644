"""A request's usage when the server reported none (issue 34, docs/adr/0047).

Several OpenAI-compatible servers and proxies send no `usage`, and a report that fails
validation (`forge.llm.usage_bounds`) is dropped. Counting such a request as free let
`--max-budget-usd` and child budgets run on forever, so its usage is estimated from Forge's
own token counts instead: the prompt as Forge counts it (the messages sent, and the tool
definitions when the caller knows them) and the reply (its text, reasoning and tool calls).
The result is a `Usage` marked `estimated`: priced like a reported one and shown as an
estimate ("~$0.0031", `cost_estimated` in `forge run`'s `result`).
"""

from __future__ import annotations

from collections.abc import Sequence

from forge.llm.messages import Message
from forge.llm.protocols import TokenCounter
from forge.llm.stream import Usage


def estimated_usage(counter: TokenCounter, prompt_tokens: int, reply: Message) -> Usage:
    """The usage of a request whose prompt Forge counted as `prompt_tokens` and whose reply
    was `reply`."""
    completion = counter.count_message(reply)
    prompt = max(1, prompt_tokens)
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        estimated=True,
    )


def estimated_request_usage(
    counter: TokenCounter, messages: Sequence[Message], reply: Message
) -> Usage:
    """`estimated_usage` for a request of `messages` (a summarization request: no tools)."""
    return estimated_usage(counter, counter.count_messages(messages), reply)
