"""Benchmarks, run with `python -m bench [SECTION ...]` (or `make bench`).

Sections: `replay` (context policies on real sessions), `parallel` (parallel summarization),
`bookkeeping` (per-call cost of the context manager), `tui` (the app in a real terminal) and
`startup`. Each figure is a median over repeated runs and a ratio to a baseline measured in the
same run; a section that cannot measure what it should (no corpus, no tmux) fails loudly.
A full run writes `bench/RESULTS.md`. See bench/README.md for the method.
"""

from __future__ import annotations
