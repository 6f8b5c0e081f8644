"""The floor for the TUI benchmark: the least a Textual app needs to stream an answer.

An `Input` and a `Markdown` in a scroll view that follows the end. Enter sends the text as one
user message to an OpenAI-compatible server (streaming) and feeds the answer's pieces to
`Markdown.get_stream` as they arrive. Run it with
`python -m bench.minimal_app --base-url http://127.0.0.1:PORT/v1`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator, Sequence

import httpx
from textual import work
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Markdown

READY_TEXT = "Minimal app ready: type and press Enter"
"""The input's placeholder; its appearance marks the first screen."""


def content_of(line: str) -> str | None:
    """The answer text in one SSE line (`data: {...}`), "" for an event without any, None at
    `data: [DONE]` (the end)."""
    if not line.startswith("data:"):
        return ""
    payload = line.removeprefix("data:").strip()
    if payload == "[DONE]":
        return None
    try:
        event = json.loads(payload)
    except json.JSONDecodeError:
        return ""
    choices = event.get("choices") or []
    if not choices:
        return ""
    return str((choices[0].get("delta") or {}).get("content") or "")


async def answer_pieces(base_url: str, model: str, prompt: str) -> AsyncIterator[str]:
    """The streamed answer to `prompt`, piece by piece."""
    body = {"model": model, "stream": True, "messages": [{"role": "user", "content": prompt}]}
    async with (
        httpx.AsyncClient(timeout=120) as client,
        client.stream("POST", f"{base_url.rstrip('/')}/chat/completions", json=body) as response,
    ):
        response.raise_for_status()
        async for line in response.aiter_lines():
            piece = content_of(line)
            if piece is None:
                return
            if piece:
                yield piece


class MinimalApp(App[None]):
    """An input and a streamed markdown answer, nothing else."""

    CSS = """
    #chat { height: 1fr; }
    Input { dock: bottom; }
    """

    def __init__(self, base_url: str, model: str) -> None:
        super().__init__()
        self.base_url = base_url
        self.model = model

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="chat"):
            yield Markdown(id="answer")
        yield Input(placeholder=READY_TEXT)

    def on_mount(self) -> None:
        self.query_one("#chat", VerticalScroll).anchor()
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.input.clear()
        self.stream_answer(event.value)

    @work(exclusive=True)
    async def stream_answer(self, prompt: str) -> None:
        """Stream the answer into the markdown widget."""
        markdown = self.query_one("#answer", Markdown)
        stream = Markdown.get_stream(markdown)
        try:
            async for piece in answer_pieces(self.base_url, self.model, prompt):
                await stream.write(piece)
        finally:
            await stream.stop()


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and run the app."""
    parser = argparse.ArgumentParser(prog="python -m bench.minimal_app")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="gpt-4o")
    arguments = parser.parse_args(argv)
    MinimalApp(arguments.base_url, arguments.model).run()


if __name__ == "__main__":
    main()
