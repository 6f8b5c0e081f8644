"""Images a front end attaches to a prompt: `forge run --image PATH` and an editor's image
content blocks (`forge acp`), read and scaled as the session's provider takes them
(docs/adr/0055, part 2). The front ends pass the parts to `Session.run_turn(images=…)`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from forge.agent.tools.base import ToolError
from forge.agent.tools.image_files import read_image_file
from forge.config.settings import Settings
from forge.llm.image_parts import ImagePart, read_image
from forge.llm.images import ImageError


class ImageInputError(ValueError):
    """An image the front end was given cannot be attached; the message says which and why."""


def images_from_paths(paths: Iterable[str], settings: Settings) -> tuple[ImagePart, ...]:
    """The image files at `paths` (relative to the current directory; `~` expanded), each
    called by the path as given; `ImageInputError` for the first that cannot be read."""
    images: list[ImagePart] = []
    for given in paths:
        path = Path(given).expanduser()
        try:
            images.append(read_image_file(path, given, settings.llm.provider))
        except ToolError as error:
            raise ImageInputError(f"--image {given}: {error}") from None
    return tuple(images)


def image_from_bytes(data: bytes, name: str, settings: Settings) -> ImagePart:
    """`data` (an editor's decoded image block) as an image called `name`;
    `ImageInputError` when it is not a readable image."""
    try:
        return read_image(data, name, settings.llm.provider)
    except ImageError as error:
        raise ImageInputError(f"{name}: {error}") from None


def accepts_images(settings: Settings) -> bool:
    """Whether the configured model is sent images (`llm.vision`, and for auto what is known
    of the model): what `forge acp` advertises as `promptCapabilities.image`."""
    from forge.llm.vision import takes_images

    return takes_images(settings.llm.model, settings.llm.vision)
