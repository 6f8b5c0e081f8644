"""Which API key goes to which server (docs/adr/0037).

`llm.api_key` is filled from the config file, `FORGE_LLM__API_KEY` or `OPENAI_API_KEY`. With
provider anthropic, `ANTHROPIC_API_KEY` (the variable every Anthropic tool reads) comes before
the file, and a key that only came from `OPENAI_API_KEY` is never sent to Anthropic: it is
OpenAI's. The summarization server gets `llm.summarization_api_key`, else the main key when it
is the same API, else that API's conventional variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from forge.config.settings import ENV_NESTED_DELIMITER, ENV_PREFIX, LLMSettings

ANTHROPIC_API_KEY_VARIABLE = "ANTHROPIC_API_KEY"
OPENAI_API_KEY_VARIABLE = "OPENAI_API_KEY"
_FORGE_API_KEY_VARIABLE = f"{ENV_PREFIX}LLM{ENV_NESTED_DELIMITER}API_KEY"


def api_key_for(provider: str, configured: str, environ: Mapping[str, str] | None = None) -> str:
    """The key to send to a `provider` server, given the configured `llm.api_key`."""
    environ = os.environ if environ is None else environ
    if provider != "anthropic" or environ.get(_FORGE_API_KEY_VARIABLE):
        return configured
    from_anthropic = environ.get(ANTHROPIC_API_KEY_VARIABLE, "")
    if from_anthropic:
        return from_anthropic
    if configured and configured == environ.get(OPENAI_API_KEY_VARIABLE, ""):
        return ""  # OpenAI's key, filled in from OPENAI_API_KEY: not for Anthropic
    return configured


def main_api_key(llm: LLMSettings, environ: Mapping[str, str] | None = None) -> str:
    """The key for the conversation's server."""
    return api_key_for(llm.provider, llm.api_key.get_secret_value(), environ)


def summarization_api_key(llm: LLMSettings, environ: Mapping[str, str] | None = None) -> str:
    """The key for the summarization server (see the module docstring)."""
    environ = os.environ if environ is None else environ
    own = llm.summarization_api_key.get_secret_value()
    if own:
        return own
    provider = llm.effective_summarization_provider
    if provider == llm.provider:
        return main_api_key(llm, environ)
    if provider == "anthropic":
        return environ.get(ANTHROPIC_API_KEY_VARIABLE, "")
    return environ.get(OPENAI_API_KEY_VARIABLE, "")
