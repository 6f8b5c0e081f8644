"""Image files read as images (`read_file`, `@shot.png`, a dropped path, `--image`): bounded,
regular files only, scaled for the provider (docs/adr/0055, part 2)."""

from __future__ import annotations

import os
from pathlib import Path

from forge.agent.tools.base import ToolError
from forge.agent.tools.text_files import read_regular_bytes
from forge.llm.image_parts import ImagePart, read_image
from forge.llm.images import MAX_IMAGE_BYTES, ImageError, ImageProvider


def read_image_file(path: Path, shown: str, provider: ImageProvider = "openai") -> ImagePart:
    """The image at `path` (called `shown`) scaled for `provider`; `ToolError` saying why
    when it is too large, not a regular file, missing, or not a readable image. Blocking."""
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise ToolError(f"file '{shown}' does not exist") from None
    except OSError as error:
        raise ToolError(f"cannot read '{shown}': {error.strerror}") from None
    if size > MAX_IMAGE_BYTES:
        raise ToolError(
            f"'{shown}' is {size:,} bytes; an image of at most {MAX_IMAGE_BYTES:,} is read"
        )
    data = read_regular_bytes(path, shown)
    if data is None:
        raise ToolError(f"file '{shown}' does not exist")
    try:
        return read_image(data, shown, provider)
    except ImageError as error:
        raise ToolError(f"'{shown}' is {error}") from None
