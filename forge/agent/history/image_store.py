"""The images of the session files: each image's bytes once, by hash, beside the sessions.

A session file's line names an image by its SHA-256 (`ImagePart.to_record`); the bytes live in
`<sessions directory>/images/<sha256>.<suffix>` (mode 0600), written once whatever number of
sessions, forks and replaced messages refer to them. A resume reads them back, so the request
a resumed session sends holds the same images (docs/adr/0055, part 2). Base64 in every line
would make each `replace` record that keeps the message repeat the image, and every listing
read it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from forge.config.atomic import atomic_write_bytes
from forge.config.ephemeral import is_ephemeral
from forge.config.paths import ensure_dir
from forge.llm.image_parts import ImagePart
from forge.llm.messages import Message

logger = logging.getLogger(__name__)

IMAGES_DIRECTORY = "images"
"""The folder, inside the sessions directory, holding the images' bytes."""


def images_dir(session_path: Path) -> Path:
    """Where the images of the session file at `session_path` are kept."""
    return session_path.parent / IMAGES_DIRECTORY


def store_images(directory: Path, messages: Iterable[Message]) -> None:
    """Write the bytes of every loaded image of `messages` not stored yet (nothing with
    `forge run --ephemeral`). A failure is logged: losing an image must not end a session."""
    if is_ephemeral():
        return
    for message in messages:
        for image in message.images:
            if not image.loaded:
                continue
            path = directory / image.file_name
            if path.exists():
                continue
            try:
                ensure_dir(directory)
                atomic_write_bytes(path, image.data)
            except OSError as error:
                logger.warning("could not keep image %s: %s", image.name, error)


def load_image(directory: Path, image: ImagePart) -> ImagePart:
    """`image` with its bytes from `directory`, when they are there and match its hash."""
    if image.loaded or image.masked:  # a masked image's bytes are recalled, not resent
        return image
    try:
        data = (directory / image.file_name).read_bytes()
    except OSError:
        return image
    import hashlib

    if hashlib.sha256(data).hexdigest() != image.sha256:
        logger.warning("image %s: the stored bytes do not match their hash", image.name)
        return image
    return image.with_data(data)


def with_images_loaded(directory: Path, message: Message) -> Message:
    """`message` with its images' bytes read from `directory` (the same object when it has
    none to read)."""
    if not message.images or all(image.loaded or image.masked for image in message.images):
        return message
    return message.evolve(images=tuple(load_image(directory, image) for image in message.images))


def load_all(directory: Path, messages: Sequence[Message]) -> list[Message]:
    """`messages` with every image's bytes read from `directory`."""
    return [with_images_loaded(directory, message) for message in messages]
