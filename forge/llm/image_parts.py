"""An image a message carries: its bytes as sent, what it is called, and how big it is.

A user message carries the images the user attached (`@shot.png`, `forge run --image`, an
editor's image block); a tool message carries the images its tool returned (`read_file` on an
image, an MCP image result). The wire formats place them (`forge.llm.wire_format`,
`forge.llm.anthropic_wire`); the session file keeps each image's bytes once, by hash, beside
the session files (`forge.agent.history.image_store`), and the record names it (docs/adr/0055,
part 2). An image read back without its bytes (a listing, a search) has `data == b""`.

Core code: no UI.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from forge.llm.images import (
    ImageProvider,
    PreparedImage,
    anthropic_image_tokens,
    openai_image_tokens,
    prepare_image,
)

MEDIA_SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg"}
"""The file suffix an image's bytes are stored under, by media type."""


@dataclass(frozen=True, slots=True)
class ImagePart:
    """One image of a message (immutable, like the message)."""

    name: str
    """What the chat calls it: a workspace-relative path, or the name an editor or a tool gave."""
    media_type: str
    width: int
    height: int
    """The size as kept and sent to an OpenAI-compatible server (Anthropic's wire may scale
    it down further: `forge.llm.anthropic_wire`)."""
    original_width: int
    original_height: int
    sha256: str
    """The hash of `data`: where the session file's images directory keeps it."""
    size: int
    """Bytes of `data`."""
    data: bytes = field(default=b"", repr=False, compare=False)
    """The encoded image; empty when read back without its bytes."""
    masked: str = ""
    """The recall key of the message holding the original, once the context engine masked
    this old image (its bytes are then dropped and a placeholder line is sent instead)."""

    @property
    def loaded(self) -> bool:
        """Whether the bytes are here (a resumed session's are read from its images)."""
        return bool(self.data)

    @property
    def file_name(self) -> str:
        """The name the bytes are stored under: `<sha256><suffix>`."""
        return f"{self.sha256}{MEDIA_SUFFIXES.get(self.media_type, '.img')}"

    def with_data(self, data: bytes) -> ImagePart:
        """This image with its bytes."""
        return replace(self, data=data)

    def masked_by(self, key: str) -> ImagePart:
        """This image masked: no bytes, sent as a placeholder naming recall `key`."""
        return replace(self, data=b"", masked=key)

    def describe(self) -> str:
        """E.g. "shot.png (image 2048x1365 px, scaled from 3000x2000, 412 KB)": the same
        words live and after a resume."""
        scaled = (
            f", scaled from {self.original_width}x{self.original_height}"
            if (self.original_width, self.original_height) != (self.width, self.height)
            else ""
        )
        return f"{self.name} (image {self.width}x{self.height} px{scaled}, {_size(self.size)})"

    def attachment_line(self) -> str:
        """The chat's line for it as an attachment: "attached shot.png (image …)"."""
        return f"attached {self.describe()}"

    def to_record(self) -> dict[str, Any]:
        """What the session file's line keeps (no bytes)."""
        masked = {"masked": self.masked} if self.masked else {}
        return masked | {
            "name": self.name,
            "media_type": self.media_type,
            "width": self.width,
            "height": self.height,
            "original_width": self.original_width,
            "original_height": self.original_height,
            "sha256": self.sha256,
            "size": self.size,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ImagePart:
        """An image written by `to_record`, without its bytes."""
        return cls(
            name=str(record.get("name") or "image"),
            media_type=str(record.get("media_type") or "image/png"),
            width=int(record.get("width") or 0),
            height=int(record.get("height") or 0),
            original_width=int(record.get("original_width") or record.get("width") or 0),
            original_height=int(record.get("original_height") or record.get("height") or 0),
            sha256=str(record["sha256"]),
            size=int(record.get("size") or 0),
            masked=str(record.get("masked") or ""),
        )


def image_part(prepared: PreparedImage, name: str) -> ImagePart:
    """`prepared` as a message's image called `name`."""
    return ImagePart(
        name=name,
        media_type=prepared.media_type,
        width=prepared.width,
        height=prepared.height,
        original_width=prepared.original_width,
        original_height=prepared.original_height,
        sha256=hashlib.sha256(prepared.data).hexdigest(),
        size=len(prepared.data),
        data=prepared.data,
    )


def images_tokens(images: tuple[ImagePart, ...], provider: ImageProvider) -> int:
    """What `images` count in the context gauge, by `provider`'s rule for image tokens."""
    rule = anthropic_image_tokens if provider == "anthropic" else openai_image_tokens
    return sum(
        MASKED_IMAGE_TOKENS if image.masked else rule(image.width, image.height) for image in images
    )


MASKED_IMAGE_TOKENS = 20
"""What a masked image's placeholder line is taken to cost."""


def masked_image_text(image: ImagePart) -> str:
    """The line sent for a masked image: its name, and how to get it back."""
    return f"[image {image.name} masked to save context; recall {image.masked}]"


def attachment_line(image: ImagePart) -> str:
    """The chat's line for an attached image: "attached shot.png (image …)"."""
    return image.attachment_line()


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def read_image(data: bytes, name: str, provider: ImageProvider = "openai") -> ImagePart:
    """The image file's `data` scaled for `provider` (`prepare_image`) as a part called
    `name`; `ImageError` when it is not a readable image. Blocking: call it in a thread."""
    return image_part(prepare_image(data, provider), name)
