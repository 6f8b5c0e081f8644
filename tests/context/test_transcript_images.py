"""The summarizer's transcript names a user's attached image and never holds its bytes
(docs/adr/0055, part 2)."""

from __future__ import annotations

import io

from PIL import Image

from forge.context.transcript import render_message
from forge.llm.image_parts import read_image
from forge.llm.messages import Message


def test_an_attached_image_is_named_in_the_transcript_without_its_bytes() -> None:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), (1, 2, 3)).save(out, format="PNG")
    image = read_image(out.getvalue(), "shot.png")
    text = render_message(Message(role="user", content="see this", images=(image,)))
    assert text == "[user]\nsee this\n(attached image: shot.png (image 40x30 px, " + (
        f"{image.size} bytes))"
    )
