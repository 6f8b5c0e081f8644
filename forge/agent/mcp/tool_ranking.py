"""Which deferred MCP tools a `tool_search` query means: BM25 over each tool's name, its
description and its parameters' names (docs/adr/0054).

A session has at most a few hundred MCP tools, so the index is a dict of term counts built
per search (well under a millisecond for 150 tools); a library such as bm25s would bring
numpy and scipy for nothing this small needs.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from forge.llm.protocols import ToolSpec

K1 = 1.2
"""BM25's term-frequency saturation."""
B = 0.75
"""BM25's length normalisation."""
NAME_WEIGHT = 3
"""How many times a tool's name words count: a word of the name says more than one of the
description."""

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_STOP = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "into",
        "is",
        "it",
        "of",
        "on",
        "or",
        "the",
        "this",
        "that",
        "to",
        "with",
        "you",
        "your",
        "can",
        "will",
        "use",
        "used",
        "using",
    }
)


def words(text: str) -> list[str]:
    """`text` as search terms: split at case changes, digits and punctuation
    (`create_pullRequest` → create, pull, request), lower-cased, stop words left out, a plural
    `s` taken off (issues → issue)."""
    terms = []
    for match in _WORD.finditer(text):
        word = match.group().lower()
        if word in _STOP or len(word) < 2:
            continue
        terms.append(_singular(word))
    return terms


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def parameter_names(schema: Any) -> list[str]:
    """The property names of a JSON schema, nested objects' and arrays' included."""
    names: list[str] = []
    if not isinstance(schema, dict):
        return names
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, inner in properties.items():
            names.append(str(name))
            names.extend(parameter_names(inner))
    items = schema.get("items")
    if isinstance(items, dict):
        names.extend(parameter_names(items))
    return names


def document(spec: ToolSpec) -> list[str]:
    """The terms one tool is found by."""
    return [
        *words(spec.name) * NAME_WEIGHT,
        *words(spec.description),
        *words(" ".join(parameter_names(spec.parameters))),
    ]


@dataclass(frozen=True, slots=True)
class Ranked:
    """A tool's place in a search: its name and score (higher is better)."""

    name: str
    score: float


def rank(query: str, specs: Sequence[ToolSpec], limit: int) -> list[Ranked]:
    """The at most `limit` tools of `specs` that match `query` best, best first (ties in
    `specs` order); tools matching none of its words are left out."""
    terms = words(query)
    if not terms or not specs:
        return []
    documents = [Counter(document(spec)) for spec in specs]
    lengths = [sum(counts.values()) for counts in documents]
    average = sum(lengths) / len(lengths) or 1.0
    frequency = _document_frequency(documents, set(terms))
    total = len(documents)
    scored: list[Ranked] = []
    for spec, counts, length in zip(specs, documents, lengths, strict=True):
        score = 0.0
        for term in terms:
            count = counts.get(term, 0)
            if not count:
                continue
            idf = math.log(1 + (total - frequency[term] + 0.5) / (frequency[term] + 0.5))
            score += idf * count * (K1 + 1) / (count + K1 * (1 - B + B * length / average))
        if score > 0:
            scored.append(Ranked(spec.name, score))
    scored.sort(key=lambda ranked: -ranked.score)  # stable: ties keep the listing's order
    return scored[:limit]


def _document_frequency(documents: Iterable[Counter[str]], terms: set[str]) -> Counter[str]:
    frequency: Counter[str] = Counter()
    for counts in documents:
        frequency.update(term for term in terms if term in counts)
    return frequency
