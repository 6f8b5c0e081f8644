"""What a command the model runs sees of Forge's environment (issue 34, docs/adr/0053).

Every provider key Forge knows (OpenAI's, Anthropic's, `FORGE_LLM__API_KEY` and the
summarization key, which is a `FORGE_*` variable) and Forge's own `FORGE_*` settings are
dropped, and so is every name in `tools.hide_env` (a name or a shell-style pattern such as
`AWS_*`). The user's own `!` commands and hooks keep the environment they had before
(`USER_COMMAND_HIDDEN_NAMES`): they are the user's, not the model's.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping

FORGE_PREFIX = "FORGE_"
"""Forge's own settings (`FORGE_LLM__API_KEY`, `FORGE_LLM__SUMMARIZATION_API_KEY`, …)."""
USER_COMMAND_HIDDEN_NAMES = frozenset({"OPENAI_API_KEY"})
"""What `!` commands and hooks lose besides `FORGE_*` (unchanged since docs/adr/0030)."""
PROVIDER_KEY_NAMES = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})
"""The provider keys a model's command never sees (both providers' conventional variables)."""
EXTRA_ENVIRONMENT = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
"""Nobody can answer a pager or a password prompt: stdin is /dev/null."""


def user_command_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of the user's `!` commands and hooks: Forge's own `FORGE_*` settings and
    `OPENAI_API_KEY` removed, pagers off."""
    source = os.environ if environ is None else environ
    environment = {
        name: value
        for name, value in source.items()
        if name not in USER_COMMAND_HIDDEN_NAMES and not name.startswith(FORGE_PREFIX)
    }
    environment.update(EXTRA_ENVIRONMENT)
    return environment


def model_command_environment(
    hide: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a command the model runs: no provider key, no `FORGE_*`, none of the
    names or patterns in `hide` (`tools.hide_env`), pagers off."""
    source = os.environ if environ is None else environ
    patterns = [pattern for pattern in hide if pattern]
    environment = {
        name: value
        for name, value in source.items()
        if name not in PROVIDER_KEY_NAMES
        and not name.startswith(FORGE_PREFIX)
        and not any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
    }
    environment.update(EXTRA_ENVIRONMENT)
    return environment
