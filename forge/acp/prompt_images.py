"""An ACP prompt's images: image content blocks, and embedded blob resources of an image type,
as images sent with the message (docs/adr/0055, part 2).

A resource link to an image file is an `@path` mention (`prompt_text`), which attaches it as an
image; a `file://` link outside the workspace is attached the way a dropped path is. Audio is
not accepted (the initialize response says so).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from pathlib import PurePosixPath
from urllib.parse import unquote, urlparse

from acp.schema import BlobResourceContents, EmbeddedResourceContentBlock, ImageContentBlock

from forge.config.settings import Settings
from forge.llm.image_parts import ImagePart
from forge.session.images import ImageInputError, image_from_bytes


def prompt_images(blocks: Sequence[object], settings: Settings) -> tuple[ImagePart, ...]:
    """The images of `blocks`, in order, scaled for the provider; `ImageInputError` naming
    the first that is not a readable image (base64 or picture)."""
    images: list[ImagePart] = []
    for block in blocks:
        if isinstance(block, ImageContentBlock):
            data, uri = block.data, block.uri or ""
        elif (
            isinstance(block, EmbeddedResourceContentBlock)
            and isinstance(block.resource, BlobResourceContents)
            and (block.resource.mime_type or "").startswith("image/")
        ):
            data, uri = block.resource.blob, block.resource.uri
        else:
            continue
        name = _name(uri) or f"image {len(images) + 1}"
        try:
            decoded = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise ImageInputError(f"{name}: the image's data is not base64") from None
        images.append(image_from_bytes(decoded, name, settings))
    return tuple(images)


def _name(uri: str) -> str:
    """The file name a URI ends with ("" for none)."""
    if not uri:
        return ""
    return PurePosixPath(unquote(urlparse(uri).path)).name
