"""Old images are masked like large outputs and come back as images by `recall` (docs/adr/0055,
part 2): six `read_file` calls on PNGs; masking (keep 3, batch 3) replaces the oldest results
with placeholders that carry no image, and `recall` of the first sends the very image again in
the tool-provided user message. The summarizer never receives image bytes."""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image

from forge.config.settings import ContextSettings
from forge.session.build import build_session
from tests.agent.loop_harness import drive, finished
from tests.session.test_session_core import settings_for
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Text, ToolCalls

UNPRICED = "local-vision"
"""Not in the price table (masking acts as soon as a batch is ready) nor known text-only."""
RECALL = re.compile(r"; recall ([0-9a-f]{6})\]")
SHOTS = [f"shot{n}.png" for n in range(6)]


def image_urls(request: RecordedRequest) -> list[str]:
    return [
        part["image_url"]["url"]
        for message in request.messages
        if isinstance(message["content"], list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]


def first_key(request: RecordedRequest) -> str | None:
    for message in request.messages:
        if message["role"] == "tool" and (found := RECALL.search(str(message["content"]))):
            return found.group(1)
    return None


async def test_an_old_image_is_masked_and_recall_brings_it_back_as_an_image(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    for number, name in enumerate(SHOTS):
        Image.new("RGB", (600, 400), (40 * number, 90, 160)).save(workspace / name)
    llm_server.enqueue(*[ToolCalls([Call("read_file", {"path": name})]) for name in SHOTS])
    recalled: list[str] = []

    def respond(request: RecordedRequest) -> Text | ToolCalls:
        key = first_key(request)
        if key and not recalled:
            recalled.append(key)
            return ToolCalls([Call("recall", {"id": key})])
        return Text("done")

    llm_server.responder = respond
    session = build_session(settings_for(llm_server, model=UNPRICED), workspace)
    try:
        events = await drive(session.agent.run_turn("look at the screenshots"))
    finally:
        await session.aclose()
        llm_server.responder = None
    assert finished(events).reason == "answered"

    first_image = image_urls(llm_server.requests[1])[0]  # shot0.png, sent while it was new
    masked = next(request for request in llm_server.requests if first_key(request))
    placeholder = next(m for m in masked.messages if m["role"] == "tool")["content"]
    assert str(placeholder).startswith("[output masked to save context: read_file shot0.png")
    assert first_image not in image_urls(masked)  # the masked image is not sent any more
    assert len(image_urls(masked)) < len(SHOTS)
    final = llm_server.requests[-1]
    assert recalled and image_urls(final)[-1] == first_image  # back as an image
    assert all("base64" not in str(m["content"]) for m in final.messages if m["role"] != "user")


async def test_the_summarizer_never_receives_image_bytes(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    Image.new("RGB", (300, 200), (10, 20, 30)).save(workspace / "shot.png")

    def respond(request: RecordedRequest) -> Text | ToolCalls:
        if not request.tools:  # the summarizer's requests offer no tools
            return Text("Summary: the model looked at shot.png.")
        if len(request.messages) == 2:
            return ToolCalls([Call("read_file", {"path": "shot.png"})])
        return Text("a dark rectangle")

    llm_server.responder = respond
    settings = settings_for(llm_server, model=UNPRICED)
    context = ContextSettings(messages_old_threshold=1)
    session = build_session(settings.model_copy(update={"context": context}), workspace)
    try:
        await drive(session.run_turn("what is in shot.png?"))
        await drive(session.run_turn("thanks"))  # the latest message is never summarized
        await drive(session.compact())
        summaries = [m for m in session.messages if m.kind.value == "summary"]
    finally:
        await session.aclose()
        llm_server.responder = None
    assert image_urls(llm_server.requests[1])  # the turn sent the image
    # The folded tool call is named in text, with no image on the summary.
    [summary] = summaries
    assert not summary.images
    assert "shot.png is an image, attached: shot.png (image 300x200 px" in summary.content
    for request in llm_server.requests:
        if not request.tools:  # a summarizer's request, if one was made
            assert not image_urls(request) and "base64" not in request.text()


async def test_a_users_old_image_is_masked_and_recall_brings_it_back_as_an_image(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """The images of a user message older than the newest two are sent as a placeholder;
    the message keeps its text (and the chat its attachment row); `recall` returns them."""
    Image.new("RGB", (500, 500), (255, 0, 0)).save(workspace / "first.png")
    recalled: list[str] = []
    key_pattern = re.compile(r"\[image first\.png masked to save context; recall ([0-9a-f]{6})\]")

    def respond(request: RecordedRequest) -> Text | ToolCalls:
        texts = [
            part["text"]
            for message in request.messages
            if message["role"] == "user" and isinstance(message["content"], list)
            for part in message["content"]
            if part.get("type") == "text"
        ]
        found = next((m for t in texts if (m := key_pattern.search(t))), None)
        if found and not recalled:
            recalled.append(found.group(1))
            return ToolCalls([Call("recall", {"id": found.group(1)})])
        return Text("ok")

    llm_server.responder = respond
    session = build_session(settings_for(llm_server, model=UNPRICED), workspace)
    try:
        await drive(session.run_turn("see @first.png"))
        await drive(session.run_turn("second"))
        await drive(session.run_turn("third"))  # first.png's message is now the third newest
        first = next(m for m in session.messages if m.role == "user")
    finally:
        await session.aclose()
        llm_server.responder = None
    original = image_urls(llm_server.requests[0])[0]
    assert image_urls(llm_server.requests[1]) == [original]  # still among the newest two
    masked_request = llm_server.requests[2]
    assert original not in image_urls(masked_request)
    user = masked_request.messages[1]
    assert user["content"][0]["text"] == "see @first.png"  # the text is kept as typed
    assert recalled and first.images[0].masked == recalled[0]
    assert first.content == "see @first.png"
    assert first.images[0].attachment_line().startswith("attached first.png (image 500x500")
    # `recall` gives the image back as an image, in the tool-provided message.
    assert image_urls(llm_server.requests[-1])[-1] == original
