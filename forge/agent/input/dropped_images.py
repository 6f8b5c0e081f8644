"""Image files whose path was dropped or pasted into the prompt, attached as images.

A terminal turns a file dropped on it into its path: quoted (`'/home/me/Screen Shot.png'`),
with escaped spaces (`/Users/me/Screen\\ Shot.png`) or as a `file://` URL. A path in the text
that is absolute (or starts with `~/`), ends in an image suffix and names a regular file is
attached as an image, wherever it is: the user named it (docs/adr/0055, part 2). The text the
model reads keeps the path. Relative paths are `@` mentions' business.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from forge.agent.tools.base import ToolError
from forge.agent.tools.image_files import read_image_file
from forge.llm.image_parts import ImagePart
from forge.llm.images import IMAGE_SUFFIXES, ImageProvider, is_image_name

MAX_DROPPED = 8
"""At most this many images (mentioned and dropped together) are attached to one message."""

_SUFFIX = "|".join(re.escape(suffix[1:]) for suffix in sorted(IMAGE_SUFFIXES))
_DROPPED = re.compile(
    rf"""(?<![@\w])(?:
        '(?P<single>(?:/|~/|file://)[^'\n]+?\.(?:{_SUFFIX}))'
      | "(?P<double>(?:/|~/|file://)[^"\n]+?\.(?:{_SUFFIX}))"
      | (?P<bare>(?:/|~/|file://)(?:\\[ ()'"&]|[^\s'"])+?\.(?:{_SUFFIX}))(?=$|[\s,;)\]])
    )""",
    re.VERBOSE | re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class DroppedImages:
    """The images a text's dropped paths named, and one line per path that could not be read."""

    images: tuple[ImagePart, ...] = ()
    problems: tuple[str, ...] = ()


def may_name_image(text: str) -> bool:
    """Whether `text` may hold a dropped image path (cheap, no file access)."""
    if "/" not in text and "~" not in text:
        return False
    lowered = text.lower()
    return any(suffix in lowered for suffix in IMAGE_SUFFIXES)


def dropped_paths(text: str) -> list[str]:
    """The dropped image paths in `text`, as written (quotes, escapes and `file://` undone),
    each once, in order."""
    paths: list[str] = []
    for match in _DROPPED.finditer(text):
        raw = match.group("single") or match.group("double")
        if raw is None:
            raw = re.sub(r"\\(.)", r"\1", match.group("bare"))
        if raw.lower().startswith("file://"):
            raw = unquote(raw[len("file://") :])
        if raw not in paths:
            paths.append(raw)
    return paths


def dropped_images(
    text: str, provider: ImageProvider, already: Collection[str] = (), limit: int = MAX_DROPPED
) -> DroppedImages:
    """The image files `text`'s dropped paths name (not those called one of `already`), at
    most `limit`. Blocking: reads and scales the images."""
    if not may_name_image(text):
        return DroppedImages()
    images: list[ImagePart] = []
    problems: list[str] = []
    for raw in dropped_paths(text):
        path = Path(raw).expanduser()
        if raw in already or not is_image_name(path.name) or not path.is_file():
            continue  # a path that names no file is words, not a drop
        if len(images) >= limit:
            problems.append(f"{raw} not attached: at most {MAX_DROPPED} images")
            continue
        try:
            images.append(read_image_file(path, raw, provider))
        except ToolError as error:
            problems.append(f"{raw} not attached: {error}")
    return DroppedImages(tuple(images), tuple(problems))
