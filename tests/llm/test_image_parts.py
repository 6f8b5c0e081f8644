"""A message's images (docs/adr/0055, part 2): counted in the gauge by the provider's rule,
kept in the session record by hash (never base64), and read back without their bytes."""

from __future__ import annotations

import io

from PIL import Image

from forge.llm.image_parts import ImagePart, read_image
from forge.llm.images import anthropic_image_tokens, openai_image_tokens
from forge.llm.messages import Message
from forge.llm.tokenizer import CharEstimateCounter, TiktokenCounter
from forge.llm.vision import takes_images, vision_refusal


def image(width: int, height: int) -> ImagePart:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (9, 9, 9)).save(out, format="PNG")
    return read_image(out.getvalue(), "shot.png")


def test_the_gauge_counts_an_image_by_the_providers_rule() -> None:
    shot = image(2000, 1000)
    plain = Message(role="user", content="look")
    with_image = Message(role="user", content="look", images=(shot,))
    openai = TiktokenCounter("gpt-4o")
    anthropic = TiktokenCounter("gpt-4o", image_provider="anthropic")
    assert openai.count_message(with_image) - openai.count_message(plain) == (
        openai_image_tokens(2000, 1000)
    )
    assert anthropic.count_message(with_image) - anthropic.count_message(plain) == (
        anthropic_image_tokens(2000, 1000)
    )
    estimate = CharEstimateCounter()
    assert estimate.count_message(with_image) > estimate.count_message(plain)


def test_the_record_names_the_image_by_hash_and_reads_back_without_bytes() -> None:
    shot = image(30, 20)
    message = Message(role="user", content="look", images=(shot,))
    record = message.to_record()
    assert record["images"] == [shot.to_record()]
    assert "data" not in record["images"][0] and record["images"][0]["sha256"] == shot.sha256
    back = Message.from_record(record)
    [read] = back.images
    assert read == shot and not read.loaded  # the bytes live beside the session file
    assert "images" not in Message(role="user", content="x").to_record()  # old shape kept


def test_vision_auto_knows_text_only_families_and_the_setting_decides_otherwise() -> None:
    assert takes_images("gpt-4o", "auto") and takes_images("claude-sonnet-4-5", "auto")
    assert takes_images("qwen2.5-vl-7b-instruct", "auto")
    for text_only in ("deepseek-chat", "gpt-3.5-turbo", "o3-mini", "qwen3-coder-30b"):
        assert not takes_images(text_only, "auto"), text_only
    assert takes_images("deepseek-chat", "on") and not takes_images("gpt-4o", "off")
    assert vision_refusal("gpt-4o", "off") == (
        "images are not sent: llm.vision is off (the model is gpt-4o)"
    )


def test_a_tools_images_follow_all_the_results_of_their_reply_on_chat_completions() -> None:
    from forge.llm.messages import ToolCall, assistant, tool_result, user
    from forge.llm.wire_format import TOOL_IMAGES_NOTE, chat_messages

    first, second = ToolCall("c1", "read_file"), ToolCall("c2", "read_file")
    shot = image(10, 10)
    sent = chat_messages(
        [
            user("look"),
            assistant(tool_calls=(first, second)),
            tool_result(first, "shot.png is an image").evolve(images=(shot,)),
            tool_result(second, "text"),
            assistant("seen"),
        ]
    )
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "user", "assistant"]
    follow = sent[4]["content"]
    assert follow[0]["text"] == TOOL_IMAGES_NOTE
    assert follow[1]["text"] == "read_file (c1): shot.png"
    assert follow[2]["image_url"]["url"].startswith("data:image/png;base64,")
