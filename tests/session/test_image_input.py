"""Images in (docs/adr/0055, part 2), through a whole session against the loopback servers:
`@shot.png` and a dropped path reach an OpenAI-compatible server as an `image_url` part and
the Messages API as an image block, scaled down to each provider's longest side; `read_file`
on a PNG answers with a following tool-provided user message on Chat Completions and an image
inside the `tool_result` on Anthropic; a model known not to take images is refused before
anything is sent; the session file keeps the bytes once and a resume sends them again."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from PIL import Image
from pydantic import SecretStr

from forge.agent.error_kinds import IMAGES_NOT_ACCEPTED_KIND
from forge.agent.events import ApprovalRequested, ErrorEvent, QuestionAsked
from forge.config.settings import LLMSettings, Settings
from forge.llm.wire_format import TOOL_IMAGES_NOTE
from forge.session.build import SessionOptions, build_session
from forge.session.events import AttachmentsAdded, SessionEvent
from tests.agent.loop_harness import approve_once, finished
from tests.support.anthropic_server import Answer, AnthropicServer, Use
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

KEY = "sk-test-images-0123456789abcdef"


def settings_for(server: OpenAIServer, **llm: object) -> Settings:
    values: dict[str, object] = {
        "base_url": server.base_url,
        "api_key": SecretStr(KEY),
        "max_retries": 0,
        "model": "gpt-4o",
        **llm,
    }
    return Settings(llm=LLMSettings.model_validate(values))


def anthropic_settings(server: AnthropicServer) -> Settings:
    llm = LLMSettings.model_validate(
        {
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "base_url": server.base_url,
            "api_key": SecretStr(KEY),
            "max_retries": 0,
        }
    )
    return Settings(llm=llm)


def write_png(path: Path, width: int, height: int) -> Path:
    Image.new("RGB", (width, height), (200, 40, 40)).save(path, format="PNG")
    return path


def size_of(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        return image.size


def data_url_size(url: str) -> tuple[int, int]:
    header, _, encoded = url.partition(",")
    assert header == "data:image/png;base64"
    return size_of(base64.b64decode(encoded))


def image_urls(content: Any) -> list[str]:
    if not isinstance(content, list):
        return []
    return [part["image_url"]["url"] for part in content if part.get("type") == "image_url"]


def image_blocks(blocks: Any) -> list[dict[str, Any]]:
    return [block for block in blocks or [] if block.get("type") == "image"]


async def drive(events: AsyncIterator[SessionEvent]) -> list[SessionEvent]:
    seen: list[SessionEvent] = []
    async for event in events:
        seen.append(event)
        if isinstance(event, ApprovalRequested):
            event.future.set_result(approve_once(event))
        elif isinstance(event, QuestionAsked):
            event.future.set_result("yes")
    return seen


def attached_lines(events: list[SessionEvent]) -> tuple[str, ...]:
    return next(event.attached for event in events if isinstance(event, AttachmentsAdded))


async def test_an_at_mentioned_image_reaches_the_openai_server_as_an_image_url_part_downscaled(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_png(workspace / "shot.png", 3000, 1500)
    llm_server.enqueue(Text("a red rectangle"))
    session = build_session(settings_for(llm_server), workspace)
    try:
        events = await drive(session.run_turn("what is in @shot.png?"))
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"  # type: ignore[arg-type]
    [line] = attached_lines(events)
    assert line.startswith("attached shot.png (image 2048x1024 px, scaled from 3000x1500, ")
    assert line.endswith((" KB)", " bytes)"))
    user = llm_server.requests[0].messages[-1]
    assert user["role"] == "user"
    assert user["content"][0] == {"type": "text", "text": "what is in @shot.png?"}
    [url] = image_urls(user["content"])
    assert data_url_size(url) == (2048, 1024)  # longest side 2048, the aspect kept


async def test_an_at_mentioned_image_reaches_the_messages_api_as_an_image_block_downscaled(
    anthropic_server: AnthropicServer, workspace: Path
) -> None:
    write_png(workspace / "shot.png", 1000, 3200)
    anthropic_server.enqueue(Answer("tall and red"))
    session = build_session(anthropic_settings(anthropic_server), workspace)
    try:
        events = await drive(session.run_turn("look at @shot.png"))
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"  # type: ignore[arg-type]
    user = anthropic_server.requests[0].messages[-1]
    [block] = image_blocks(user["content"])
    assert block["source"]["type"] == "base64"
    assert block["source"]["media_type"] == "image/png"
    assert size_of(base64.b64decode(block["source"]["data"])) == (490, 1568)
    assert user["content"][0]["text"] == "look at @shot.png"


async def test_a_dropped_path_outside_the_workspace_is_attached_as_an_image(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    desktop = tmp_path / "Desktop"
    desktop.mkdir()
    shot = write_png(desktop / "Screen Shot.png", 640, 480)
    llm_server.enqueue(Text("seen"))
    session = build_session(settings_for(llm_server), workspace)
    try:
        events = await drive(session.run_turn(f"what is wrong here? '{shot}'"))
    finally:
        await session.aclose()
    assert attached_lines(events)[0].startswith(f"attached {shot} (image 640x480 px")
    [url] = image_urls(llm_server.requests[0].messages[-1]["content"])
    assert data_url_size(url) == (640, 480)


async def test_read_file_on_a_png_answers_with_a_tool_provided_user_message_on_chat_completions(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_png(workspace / "diagram.png", 4096, 1024)
    llm_server.enqueue(ToolCalls([Call("read_file", {"path": "diagram.png"})]), Text("a bar"))
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        events = await drive(session.run_turn("describe diagram.png"))
        user_messages = [m for m in session.messages if m.role == "user"]
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"  # type: ignore[arg-type]
    sent = llm_server.requests[1].messages
    tool = next(m for m in sent if m["role"] == "tool")
    assert isinstance(tool["content"], str)  # a tool message cannot carry an image
    assert tool["content"].startswith("diagram.png is an image, attached: diagram.png (image")
    follow = sent[sent.index(tool) + 1]
    assert follow["role"] == "user"
    assert follow["content"][0] == {"type": "text", "text": TOOL_IMAGES_NOTE}
    assert "read_file" in follow["content"][1]["text"]
    [url] = image_urls(follow["content"])
    assert data_url_size(url) == (2048, 512)
    # In Forge's conversation it is the tool's, not the user's: one user message, the task.
    assert [m.content for m in user_messages] == ["describe diagram.png"]


async def test_read_file_on_a_png_puts_the_image_inside_the_tool_result_on_anthropic(
    anthropic_server: AnthropicServer, workspace: Path
) -> None:
    write_png(workspace / "diagram.png", 2000, 2000)
    anthropic_server.enqueue(
        Answer("", calls=[Use("read_file", {"path": "diagram.png"})]), Answer("a square")
    )
    session = build_session(
        anthropic_settings(anthropic_server), workspace, SessionOptions(approve_all=True)
    )
    try:
        events = await drive(session.run_turn("describe diagram.png"))
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"  # type: ignore[arg-type]
    last = anthropic_server.requests[1].messages[-1]
    [result] = [block for block in last["content"] if block["type"] == "tool_result"]
    assert result["content"][0]["type"] == "text"
    [block] = image_blocks(result["content"])
    assert size_of(base64.b64decode(block["source"]["data"])) == (1568, 1568)


async def test_a_model_known_not_to_take_images_is_refused_before_anything_is_sent(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_png(workspace / "shot.png", 100, 100)
    session = build_session(settings_for(llm_server, model="deepseek-chat"), workspace)
    try:
        events = await drive(session.run_turn("what is in @shot.png?"))
        messages = list(session.messages)
    finally:
        await session.aclose()
    [error] = [event for event in events if isinstance(event, ErrorEvent)]
    assert error.kind == IMAGES_NOT_ACCEPTED_KIND and error.fatal
    assert "deepseek-chat" in error.message and "llm.vision" in error.message
    assert finished(events).reason == "error"  # type: ignore[arg-type]
    assert llm_server.requests == []
    assert not any(m.role == "user" for m in messages)


async def test_vision_on_overrides_the_guess_and_off_refuses_any_model(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_png(workspace / "shot.png", 100, 100)
    llm_server.enqueue(Text("ok"))
    # YAML's `true`/`false` (and on/off, which YAML reads as booleans) are accepted.
    on = settings_for(llm_server, model="deepseek-chat", vision=True)
    off = settings_for(llm_server, model="gpt-4o", vision=False)
    assert (on.llm.vision, off.llm.vision) == ("on", "off")
    for settings, sent in ((on, True), (off, False)):
        session = build_session(settings, workspace)
        try:
            events = await drive(session.run_turn("see @shot.png"))
        finally:
            await session.aclose()
        errors = [event for event in events if isinstance(event, ErrorEvent)]
        assert (not errors) is sent
    assert len(llm_server.requests) == 1


async def test_a_tool_image_for_a_text_only_model_is_said_in_the_result_not_dropped(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_png(workspace / "diagram.png", 64, 64)
    llm_server.enqueue(ToolCalls([Call("read_file", {"path": "diagram.png"})]), Text("ok"))
    settings = settings_for(llm_server, model="gpt-3.5-turbo")
    session = build_session(settings, workspace, SessionOptions(approve_all=True))
    try:
        await drive(session.run_turn("describe diagram.png"))
    finally:
        await session.aclose()
    sent = llm_server.requests[1].messages
    tool = next(m for m in sent if m["role"] == "tool")
    assert "[the image was not sent to the model: the model gpt-3.5-turbo" in tool["content"]
    assert sent[-1]["role"] == "tool"  # no image message follows


async def test_the_session_keeps_the_image_once_and_a_resume_sends_the_same_request(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_png(workspace / "shot.png", 300, 200)
    llm_server.enqueue(Text("first"), Text("second"))
    first = build_session(settings_for(llm_server), workspace)
    try:
        await drive(first.run_turn("what is in @shot.png?"))
        session_id, path = first.session_id, first.log.path
    finally:
        await first.aclose()
    lines = path.read_text(encoding="utf-8")
    assert "base64" not in lines and len(lines) < 20_000  # bytes beside, not in the lines
    stored = list((path.parent / "images").iterdir())
    assert len(stored) == 1 and stored[0].suffix == ".png"
    (workspace / "shot.png").unlink()  # the resume does not read the workspace again

    resumed = build_session(
        settings_for(llm_server), workspace, SessionOptions(session_id=session_id)
    )
    try:
        await drive(resumed.run_turn("and now?"))
    finally:
        await resumed.aclose()
    before, after = llm_server.requests
    assert image_urls(after.messages[1]["content"]) == image_urls(before.messages[1]["content"])
    assert len(image_urls(after.messages[1]["content"])) == 1
