"""`forge acp` takes the editor's images (docs/adr/0055, part 2): an image content block and a
resource link to an image file reach the model as `image_url` parts, scaled down; the initialize
response says images are taken only when the configured model takes them; a block that is not
an image is refused with an error naming it."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import ImageContentBlock, ResourceContentBlock
from PIL import Image

from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.support.openai_server import OpenAIServer, Text


def png_bytes(size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (255, 200, 0)).save(out, format="PNG")
    return out.getvalue()


def sent_sizes(content: Any) -> list[tuple[int, int]]:
    sizes = []
    for part in content:
        if part.get("type") == "image_url":
            encoded = part["image_url"]["url"].partition(",")[2]
            with Image.open(io.BytesIO(base64.b64decode(encoded))) as image:
                sizes.append(image.size)
    return sizes


async def test_an_image_block_and_an_image_link_reach_the_model_as_images(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "diagram.png").write_bytes(png_bytes((100, 80)))
    block = ImageContentBlock(
        type="image",
        mime_type="image/png",
        data=base64.b64encode(png_bytes((3000, 2000))).decode("ascii"),
        uri="file:///home/me/Screenshot.png",
    )
    link = ResourceContentBlock(
        type="resource_link", uri=(workspace / "diagram.png").as_uri(), name="diagram.png"
    )
    llm_server.enqueue(Text("two yellow images"))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await connection.prompt(
            session_id=session.session_id,
            prompt=[*prompt_of("what do these show?"), block, link],
        )
    assert answer.stop_reason == "end_turn"
    content = llm_server.requests[0].messages[-1]["content"]
    assert content[0] == {"type": "text", "text": "what do these show? @diagram.png"}
    # The block first (the front end's), then the mentioned file; scaled to 2048 px.
    assert sent_sizes(content) == [(2048, 1365), (100, 80)]


async def test_initialize_says_no_images_for_a_text_only_model_and_a_bad_block_is_refused(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    client = RecordingClient()
    environment = forge_environment(llm_server, FORGE_LLM__MODEL="deepseek-chat")
    async with forge_acp(client, environment, workspace=workspace, initialize=False) as (
        connection,
        _,
    ):
        answer = await connection.initialize(protocol_version=1)
        capabilities = answer.agent_capabilities
        assert capabilities is not None and capabilities.prompt_capabilities is not None
        assert capabilities.prompt_capabilities.image is False
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        broken = ImageContentBlock(type="image", mime_type="image/png", data="bm90IGFuIGltYWdl")
        with pytest.raises(RequestError, match="image 1: not a readable image"):
            await connection.prompt(
                session_id=session.session_id, prompt=[*prompt_of("look"), broken]
            )
    assert llm_server.requests == []


async def test_a_loaded_session_replays_the_users_image(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    block = ImageContentBlock(
        type="image", mime_type="image/png", data=base64.b64encode(png_bytes((40, 30))).decode()
    )
    llm_server.enqueue(Text("a yellow box"))
    environment = forge_environment(llm_server)
    async with forge_acp(RecordingClient(), environment, workspace=workspace) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await connection.prompt(session_id=sid, prompt=[*prompt_of("what is it?"), block])
    sent = llm_server.requests[0].messages[-1]["content"][1]["image_url"]["url"]

    second = RecordingClient()
    async with forge_acp(second, environment, workspace=workspace) as (connection, _):
        await connection.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
    users = [u.content for u in second.of_kind("user_message_chunk")]
    assert users[0].text == "what is it?"
    assert users[1].type == "image" and f"data:{users[1].mime_type};base64,{users[1].data}" == sent
