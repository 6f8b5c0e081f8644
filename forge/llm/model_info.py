"""What Forge knows about a model from its name alone: tokenizer encoding and context window.

The tables are deliberately small: well-known families matched by name prefix, and a
conservative default for everything else, so an unknown model is budgeted too tightly
rather than overflowed. Configuration can always override the window.
"""

from __future__ import annotations

import re

O200K_BASE = "o200k_base"
CL100K_BASE = "cl100k_base"

DEFAULT_CONTEXT_WINDOW = 32_768
"""Window assumed for a model no table entry matches: small enough to fit most local models."""

MAXIMUM_REPLY_HEADROOM = 16_384
"""The most tokens ever kept free for a reply, however large the window."""

# Checked in order, first match wins. The o200k families come first because "gpt-4o" and
# "gpt-4.1" also start with "gpt-4", which on its own means the older cl100k tokenizer.
_ENCODING_BY_PATTERN: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(chatgpt-4o|gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|codex)"), O200K_BASE),
    (re.compile(r"^o\d"), O200K_BASE),
    (re.compile(r"^(gpt-4|gpt-3\.5|gpt-35)"), CL100K_BASE),
    (
        re.compile(r"^(text-embedding-3|text-embedding-ada-002|davinci-002|babbage-002)"),
        CL100K_BASE,
    ),
)

# Checked in order, first match wins, so specific names precede their family.
_CONTEXT_WINDOW_BY_PATTERN: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"^gpt-4\.1"), 1_047_576),
    (re.compile(r"^(chatgpt-4o|gpt-4o|gpt-4\.5)"), 128_000),
    (re.compile(r"^gpt-5"), 400_000),
    (re.compile(r"^gpt-oss"), 131_072),
    (re.compile(r"^o1-(mini|preview)"), 128_000),
    (re.compile(r"^o\d"), 200_000),
    (re.compile(r"^gpt-4-(turbo|1106|0125|vision)"), 128_000),
    (re.compile(r"^gpt-4-32k"), 32_768),
    (re.compile(r"^gpt-4"), 8_192),
    (re.compile(r"^gpt-3\.5-turbo-instruct"), 4_096),
    (re.compile(r"^(gpt-3\.5|gpt-35)"), 16_385),
    # Anthropic's models: 200k tokens (the 1M window of some is a beta behind a header).
    (re.compile(r"^claude-(opus|sonnet|haiku)-4"), 200_000),
    (re.compile(r"^claude-3"), 200_000),
    (re.compile(r"^claude"), 200_000),
    (re.compile(r"^gemini"), 1_048_576),
    # Llama 3.0 shipped with 8k; 3.1 onward (and Llama 4 as most providers serve it) with 128k.
    (re.compile(r"^(meta-)?llama-?3(-|:|$)"), 8_192),
    (re.compile(r"^(meta-)?llama"), 131_072),
    (re.compile(r"^qwen-?3-coder"), 262_144),
    (re.compile(r"^qwen-?2\.5"), 131_072),
    # Qwen3 is 32k natively; larger windows depend on the server enabling YaRN scaling.
    (re.compile(r"^(qwen|qwq)"), 32_768),
    (re.compile(r"^codestral"), 256_000),
    (re.compile(r"^(mistral-large|mistral-medium|devstral|ministral)"), 131_072),
    (re.compile(r"^(mistral|mixtral)"), 32_768),
    # DeepSeek's own API has served 64k and 128k over time; budget for the smaller.
    (re.compile(r"^deepseek"), 65_536),
)


DEFAULT_MAX_OUTPUT_TOKENS = 8_192
"""`max_tokens` sent to the Anthropic Messages API (which requires one) for a model the table
below does not know."""

# Checked in order, first match wins: the most output tokens a reply may have.
_MAX_OUTPUT_BY_PATTERN: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"^claude-(sonnet|haiku)-4"), 64_000),
    (re.compile(r"^claude-opus-4-[5-9]"), 64_000),
    (re.compile(r"^claude-opus-4"), 32_000),
    (re.compile(r"^claude-3-7-sonnet"), 64_000),
)


def max_output_tokens(model: str) -> int:
    """The `max_tokens` a request to `model` asks for when the caller gives none: the model's
    own limit for known Claude models, else `DEFAULT_MAX_OUTPUT_TOKENS`."""
    name = normalize_model_name(model)
    for pattern, limit in _MAX_OUTPUT_BY_PATTERN:
        if pattern.match(name):
            return limit
    return DEFAULT_MAX_OUTPUT_TOKENS


def normalize_model_name(model: str) -> str:
    """The bare, lower-case model name used for matching.

    Drops provider prefixes ("openai/gpt-4o" as OpenRouter spells it), a fine-tuning
    prefix ("ft:gpt-4o-mini:org::id") and OpenRouter variant suffixes ("...:free").
    """
    name = model.strip().lower()
    if name.startswith("ft:"):
        name = name[len("ft:") :]
    name = name.rsplit("/", 1)[-1]
    # After a fine-tune or OpenRouter colon comes an organisation or a variant, never the family.
    # Ollama tags ("llama3.1:8b") lose their size this way, which no table entry needs.
    return name.split(":", 1)[0]


def encoding_name_for(model: str) -> str:
    """The tiktoken encoding name for a model: "o200k_base" unless a family needs "cl100k_base".

    Unknown models (Claude, Llama, Qwen, ...) get "o200k_base": their real tokenizers differ,
    and the newest OpenAI encoding is the closest general-purpose estimate available offline.
    """
    name = normalize_model_name(model)
    for pattern, encoding_name in _ENCODING_BY_PATTERN:
        if pattern.match(name):
            return encoding_name
    return O200K_BASE


def context_window(model: str) -> int:
    """The context window in tokens for a well-known model family, else `DEFAULT_CONTEXT_WINDOW`."""
    name = normalize_model_name(model)
    for pattern, window in _CONTEXT_WINDOW_BY_PATTERN:
        if pattern.match(name):
            return window
    return DEFAULT_CONTEXT_WINDOW


def default_reply_headroom(window: int) -> int:
    """Tokens to keep free for the model's reply in a window of `window` tokens.

    An eighth of the window, capped at `MAXIMUM_REPLY_HEADROOM`, so small local models keep
    most of their window for the prompt and large ones do not waste a big share on the reply.
    """
    if window <= 0:
        raise ValueError(f"context window must be positive, got {window}")
    return min(MAXIMUM_REPLY_HEADROOM, window // 8)
