"""`forge run --image PATH` (repeatable; docs/adr/0055, part 2): a real subprocess sends the
images with the task to the loopback server, scaled down, says what it attached on stderr, and
refuses an unreadable image or a text-only model before anything is sent."""

from __future__ import annotations

import base64
import io
from pathlib import Path

from PIL import Image

from tests.headless.test_headless import forge_run
from tests.support.openai_server import OpenAIServer, Text


def png(path: Path, size: tuple[int, int]) -> Path:
    Image.new("RGB", size, (0, 128, 255)).save(path, format="PNG")
    return path


def sent_sizes(server: OpenAIServer) -> list[tuple[int, int]]:
    content = server.requests[0].messages[-1]["content"]
    sizes = []
    for part in content:
        if part.get("type") == "image_url":
            encoded = part["image_url"]["url"].partition(",")[2]
            with Image.open(io.BytesIO(base64.b64decode(encoded))) as image:
                sizes.append(image.size)
    return sizes


def test_images_go_with_the_task_scaled_down(llm_server: OpenAIServer, workspace: Path) -> None:
    png(workspace / "wide.png", (4000, 1000))
    png(workspace / "small.png", (64, 48))
    llm_server.enqueue(Text("two blue images"))
    result = forge_run(
        llm_server,
        workspace,
        "--image",
        "wide.png",
        "--image",
        "small.png",
        "compare these",
        env={"FORGE_LLM__MODEL": "gpt-4o"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "two blue images"
    assert sent_sizes(llm_server) == [(2048, 512), (64, 48)]
    assert "forge run: attached wide.png (image 2048x512 px, scaled from 4000x1000" in (
        result.stderr
    )
    assert "forge run: attached small.png (image 64x48 px" in result.stderr


def test_an_unreadable_image_is_a_usage_error_and_nothing_is_sent(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "fake.png").write_text("not an image")
    result = forge_run(llm_server, workspace, "--image", "fake.png", "look")
    assert result.returncode == 2
    assert "forge run: --image fake.png: 'fake.png' is not a readable image" in result.stderr
    assert llm_server.requests == []


def test_a_text_only_model_is_refused_with_a_clear_error(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    png(workspace / "shot.png", (10, 10))
    result = forge_run(
        llm_server,
        workspace,
        "--image",
        "shot.png",
        "look",
        env={"FORGE_LLM__MODEL": "deepseek-chat"},
    )
    assert result.returncode != 0
    assert "the model deepseek-chat is known not to take images" in result.stderr
    assert "llm.vision: on" in result.stderr
    assert llm_server.requests == []
