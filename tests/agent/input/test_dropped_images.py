"""Image paths dropped or pasted into the prompt (docs/adr/0055, part 2): the shapes terminals
paste, real files only, and at most eight images per message with `@` mentions."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from forge.agent.input.dropped_images import MAX_DROPPED, dropped_images, dropped_paths
from forge.agent.input.mentions import expand_mentions
from forge.llm.tokenizer import CharEstimateCounter


def test_the_shapes_terminals_paste_are_read_as_paths() -> None:
    text = (
        "look at '/home/me/Screen Shot.png' and /Users/me/Screen\\ Shot\\ 2.jpg, "
        'also "/tmp/q.webp", file:///tmp/a%20b.PNG, @/x.png, /tmp/notes.txt and a/b.png'
    )
    assert dropped_paths(text) == [
        "/home/me/Screen Shot.png",
        "/Users/me/Screen Shot 2.jpg",
        "/tmp/q.webp",
        "/tmp/a b.PNG",
    ]


def test_only_existing_image_files_are_attached(tmp_path: Path) -> None:
    shot = tmp_path / "Screen Shot.png"
    Image.new("RGB", (20, 10)).save(shot)
    (tmp_path / "fake.png").write_text("text")
    text = f"'{shot}' and {tmp_path}/missing.png and {tmp_path}/fake.png"
    found = dropped_images(text, "openai")
    assert [image.name for image in found.images] == [str(shot)]
    [problem] = found.problems
    assert problem.startswith(
        f"{tmp_path}/fake.png not attached: '{tmp_path}/fake.png' is not a readable image"
    )


def test_a_message_takes_at_most_eight_images(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    names = [f"s{n}.png" for n in range(MAX_DROPPED + 2)]
    for name in names:
        Image.new("RGB", (4, 4)).save(workspace / name)
    text = " ".join(f"@{name}" for name in names)
    expansion = expand_mentions(text, workspace, counter=CharEstimateCounter(), limit_tokens=1000)
    assert len(expansion.images) == MAX_DROPPED
    assert expansion.problems == (
        f"@{names[-2]} not attached: at most {MAX_DROPPED} images",
        f"@{names[-1]} not attached: at most {MAX_DROPPED} images",
    )
