"""The workspace's files as the tools see them (docs/adr/0059 Part 5): `walk` lists them
skipping what `.gitignore` and `.forgeignore` leave out, so `@` completion offers the files
the model may read, no others.
"""

from __future__ import annotations

from forge.agent.tools.ignore import walk

__all__ = ["walk"]
