"""Images prepared for vision models: downscaled with the aspect kept, encoded, counted by the
providers' rules."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from forge.llm.images import (
    ANTHROPIC_MAX_SIDE,
    OPENAI_MAX_SIDE,
    ImageError,
    anthropic_image_tokens,
    fitted_size,
    image_tokens,
    openai_image_tokens,
    prepare_image,
)


def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


def test_a_large_screenshot_is_downscaled_for_each_provider_keeping_its_aspect() -> None:
    data = png(3000, 1500)
    for provider, limit in (("openai", OPENAI_MAX_SIDE), ("anthropic", ANTHROPIC_MAX_SIDE)):
        prepared = prepare_image(data, provider)  # type: ignore[arg-type]
        assert (prepared.width, prepared.height) == (limit, limit // 2)
        assert prepared.resized and (prepared.original_width, prepared.original_height) == (
            3000,
            1500,
        )
        with Image.open(io.BytesIO(prepared.data)) as sent:
            assert sent.size == (limit, limit // 2)
        assert prepared.data_url().startswith("data:image/png;base64,")
        assert base64.b64decode(prepared.base64()) == prepared.data


def test_a_small_image_is_sent_at_its_size_and_a_jpeg_stays_a_jpeg() -> None:
    out = io.BytesIO()
    Image.new("RGB", (640, 480)).save(out, format="JPEG")
    prepared = prepare_image(out.getvalue(), "openai")
    assert (prepared.width, prepared.height, prepared.media_type) == (640, 480, "image/jpeg")
    assert not prepared.resized


def test_bytes_that_are_not_an_image_are_refused() -> None:
    with pytest.raises(ImageError, match="not a readable image"):
        prepare_image(b"%PDF-1.4 not an image", "anthropic")


def test_token_rules_match_the_providers_published_examples() -> None:
    # OpenAI: 1024x1024 -> 768x768 -> 4 tiles -> 765; 2048x4096 -> 1024x2048 -> 768x1536
    # -> 6 tiles -> 1105.
    assert openai_image_tokens(1024, 1024) == 765
    assert openai_image_tokens(2048, 4096) == 1105
    # Anthropic: 1092x1092 is about 1590 tokens; larger images count at 1568 px.
    assert anthropic_image_tokens(1092, 1092) == 1590
    assert anthropic_image_tokens(3136, 3136) == anthropic_image_tokens(1568, 1568)
    prepared = prepare_image(png(1000, 500), "anthropic")
    assert image_tokens(prepared, "anthropic") == 667
    assert image_tokens(prepared, "openai") == 85 + 170 * 2


def test_fitted_size_never_reaches_zero() -> None:
    assert fitted_size(10_000, 1, 2048) == (2048, 1)
    assert fitted_size(100, 50, 2048) == (100, 50)
