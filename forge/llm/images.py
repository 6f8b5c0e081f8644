"""Images for vision models: downscaled to what the provider takes, encoded, and counted.

The groundwork for image input (issue 43): nothing sends images yet. A provider accepts an
image up to a longest side (`OPENAI_MAX_SIDE` for OpenAI-compatible servers,
`ANTHROPIC_MAX_SIDE` for the Messages API, where larger images are scaled down server-side
anyway at a cost in latency); `prepare_image` scales down to it with the aspect ratio kept
(Pillow) and re-encodes as PNG, or JPEG for a photo that was JPEG. The token rules are the
providers' published ones: OpenAI's tiles (85 + 170 per 512-px tile after fitting in
2048x2048 and then 768 px on the short side), Anthropic's width * height / 750.

Core code: no UI. Pillow is imported only when an image is prepared.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from typing import Literal

OPENAI_MAX_SIDE = 2048
"""Longest side, in pixels, of an image sent to an OpenAI-compatible server."""
ANTHROPIC_MAX_SIDE = 1568
"""Longest side, in pixels, of an image sent to the Anthropic Messages API."""
MAX_IMAGE_BYTES = 20_000_000
"""A larger file is not read as an image (a decompression bomb's guard is Pillow's own)."""

ImageProvider = Literal["openai", "anthropic"]


class ImageError(ValueError):
    """The bytes are not an image Forge can send; the message says why."""


@dataclass(frozen=True, slots=True)
class PreparedImage:
    """An image ready to send: its encoded bytes and media type, its size as sent, and the
    size it had."""

    data: bytes
    media_type: str
    width: int
    height: int
    original_width: int
    original_height: int

    @property
    def resized(self) -> bool:
        """Whether it was scaled down."""
        return (self.width, self.height) != (self.original_width, self.original_height)

    def data_url(self) -> str:
        """`data:<type>;base64,<data>`, as OpenAI's `image_url` part takes it."""
        return f"data:{self.media_type};base64,{self.base64()}"

    def base64(self) -> str:
        """The encoded bytes in base64, as Anthropic's image block takes them."""
        return base64.b64encode(self.data).decode("ascii")


def max_side(provider: ImageProvider) -> int:
    """The longest side `provider` takes."""
    return ANTHROPIC_MAX_SIDE if provider == "anthropic" else OPENAI_MAX_SIDE


def fitted_size(width: int, height: int, limit: int) -> tuple[int, int]:
    """(width, height) scaled down so the longest side is at most `limit`, aspect kept; the
    same size when it fits already. Never below 1 px."""
    longest = max(width, height)
    if longest <= limit:
        return width, height
    scale = limit / longest
    return max(1, round(width * scale)), max(1, round(height * scale))


def prepare_image(data: bytes, provider: ImageProvider) -> PreparedImage:
    """`data` (PNG, JPEG, GIF, WebP, BMP…) scaled down for `provider` and encoded;
    `ImageError` for anything that is not a readable image."""
    from PIL import Image, UnidentifiedImageError  # imported when an image is attached

    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(f"the image is {len(data)} bytes; at most {MAX_IMAGE_BYTES} are read")
    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.load()
            source_format = opened.format or ""
            image = opened.copy()
    except UnidentifiedImageError:
        raise ImageError("not a readable image (its format is not one Pillow reads)") from None
    except (OSError, Image.DecompressionBombError) as error:
        raise ImageError(f"not a readable image: {error}") from None
    original = image.size
    size = fitted_size(*original, max_side(provider))
    if size != original:
        image = image.resize(size, Image.Resampling.LANCZOS)
    if source_format == "JPEG":
        media_type, save_format = "image/jpeg", "JPEG"
        if image.mode not in ("RGB", "L"):
            image = image.convert("RGB")
    else:
        media_type, save_format = "image/png", "PNG"
        if image.mode not in ("RGB", "RGBA", "L", "LA", "P"):
            image = image.convert("RGBA")
    out = io.BytesIO()
    image.save(out, format=save_format)
    return PreparedImage(out.getvalue(), media_type, *size, *original)


def openai_image_tokens(width: int, height: int) -> int:
    """Tokens an image costs on OpenAI's vision models at `detail: high` (the default for
    large images): fit in 2048x2048, scale the short side to 768, then 85 + 170 per
    512-px tile."""
    width, height = fitted_size(width, height, OPENAI_MAX_SIDE)
    shortest = min(width, height)
    if shortest > 768:
        scale = 768 / shortest
        width, height = round(width * scale), round(height * scale)
    tiles = math.ceil(width / 512) * math.ceil(height / 512)
    return 85 + 170 * tiles


def anthropic_image_tokens(width: int, height: int) -> int:
    """Tokens an image costs on Anthropic's models: width * height / 750, after scaling to
    the longest side they take."""
    width, height = fitted_size(width, height, ANTHROPIC_MAX_SIDE)
    return math.ceil(width * height / 750)


def image_tokens(image: PreparedImage, provider: ImageProvider) -> int:
    """What `image` counts in the context gauge on `provider`."""
    if provider == "anthropic":
        return anthropic_image_tokens(image.width, image.height)
    return openai_image_tokens(image.width, image.height)


IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"})
"""File names read as images (by `@`, `read_file`, `--image`) rather than as text."""

_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM")


def is_image_name(name: str) -> bool:
    """Whether a file called `name` is taken for an image (by its suffix)."""
    dot = name.rfind(".")
    return dot >= 0 and name[dot:].lower() in IMAGE_SUFFIXES


def looks_like_image(data: bytes) -> bool:
    """Whether `data` starts like an image file Forge reads (PNG, JPEG, GIF, BMP, WebP)."""
    return data.startswith(_SIGNATURES) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")
