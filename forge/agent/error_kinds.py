"""Stable names for what went wrong, used as the `kind` of an `ErrorEvent`.

Clients switch on these strings (and `forge run --output jsonl` prints them), so they never
change once published; see docs/adr/0015-headless-output.md.
"""

from __future__ import annotations

from forge.llm.errors import ERROR_KIND_NAMES, LLMError, kind_of


class EmptyReplyError(LLMError):
    """The model's reply had neither text nor tool calls (nothing to append)."""


TIMEOUT_KIND = "timeout"
"""The kind `forge run` reports when `--timeout` ends the run."""

IMAGES_NOT_ACCEPTED_KIND = "images_not_accepted"
"""The kind of the error that refuses a message's images before it is sent: the model does not
take images (`llm.vision`; docs/adr/0055, part 2)."""

ERROR_KINDS = frozenset(
    {*ERROR_KIND_NAMES.values(), "llm_error", "internal", TIMEOUT_KIND, IMAGES_NOT_ACCEPTED_KIND}
)
"""Every kind an ErrorEvent (or a headless error record) can carry; all are documented."""


def error_kind(error: BaseException | None) -> str:
    """A stable, snake_case name for an error (the `kind` of an ErrorEvent)."""
    if error is None:
        return "internal"
    kind = kind_of(error)
    if kind is not None:
        return kind
    if isinstance(error, LLMError):
        return "llm_error"
    return "internal"
