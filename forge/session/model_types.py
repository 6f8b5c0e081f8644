"""Model-side types a front end names (docs/adr/0059 Part 5): the error `session.list_models`
raises when the server cannot list its models, and the token counter `/context`'s breakdown
counts with (`session.counter`).
"""

from __future__ import annotations

from forge.llm.model_list import ModelListError
from forge.llm.protocols import TokenCounter

__all__ = ["ModelListError", "TokenCounter"]
