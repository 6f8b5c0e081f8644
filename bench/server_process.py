"""A loopback OpenAI-compatible Chat Completions server in its own process, for benchmarks.

The server under a benchmark must not share the GIL with the code it measures, so it runs as
a child process (`python -m bench.server_process ...`) and the parent talks to it over HTTP
only. `ServerProcess` starts it, waits until it accepts connections, and kills it on exit; the
child also exits by itself when its parent goes away (it watches its stdin, a pipe the parent
holds open), so no server outlives a benchmark.

Two modes:
- `summarizer`: a deterministic summarizer. After `latency` seconds it answers with the first
  sentences of its input, up to min(20 % of the input's tokens, 500) tokens (o200k_base; see
  `summary_of`). The input is the last user message's content, or, when that holds a
  `<material>...</material>` block (Forge's summary prompts and the replay's baselines wrap
  what is to be summarized so), the text inside it: a real model summarizes
  the material, not the instructions around it. Usage reports prompt_tokens = the tokens of
  every message's content and completion_tokens = the answer's tokens.
- `stream`: after `latency` seconds, streams the text of `text_file` at `tokens_per_second`
  (o200k_base tokens, `tokens_per_chunk` per SSE event, on a fixed schedule so delays do not
  accumulate), with usage at the end.

Both count the requests in flight and the peak, served at `GET /stats` and reset by
`POST /stats/reset`.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import httpx

SUMMARY_SHARE = 0.2
"""A summary is at most this share of its input's tokens..."""
SUMMARY_MAX_TOKENS = 500
"""...and at most this many tokens."""
ENCODING = "o200k_base"
READY_PREFIX = "READY "
"""The line the child prints on stdout, followed by its port, once it accepts connections."""
START_TIMEOUT = 60.0
"""Seconds the parent waits for the child to be ready (a loaded 2-core machine is slow)."""

_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")


def _encoding() -> Any:
    from forge.llm.tokenizer import get_encoding

    return get_encoding(ENCODING)


def summary_limit(input_tokens: int) -> int:
    """The most tokens a summary of `input_tokens` tokens may have: min(20 %, 500), at least 1."""
    return max(1, min(int(input_tokens * SUMMARY_SHARE), SUMMARY_MAX_TOKENS))


def summary_of(text: str, encoding: Any) -> str:
    """The summarizer's answer for `text`: its first whole sentences within `summary_limit`.

    The text's first `summary_limit(tokens)` tokens are decoded and cut back to the last
    sentence end inside them (`.`, `!` or `?` before whitespace, or a line break); when the
    first sentence alone is longer than the limit, the answer is those tokens as they are.
    """
    tokens = encoding.encode(text, disallowed_special=())
    if not tokens:
        return ""
    head = encoding.decode(tokens[: summary_limit(len(tokens))])
    ends = [match.end() for match in _SENTENCE_END.finditer(head)]
    cut = head[: ends[-1]] if ends else head
    return cut.strip() or head.strip() or head


def summarizer_input(content: str) -> str:
    """What the summarizer summarizes: the text between the first `<material>` and the last
    `</material>`, if there is such a block, else the whole text."""
    start = content.find("<material>")
    if start < 0:
        return content
    end = content.rfind("</material>")
    inner = content[start + len("<material>") : end if end > start else len(content)]
    return inner.removeprefix("\n").removesuffix("\n")


def content_text(content: Any) -> str:
    """A message content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


@dataclass
class _Stats:
    requests: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    completed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    last_stream_milliseconds: int = 0
    """How long the last paced stream took from its first to its last event (0: none yet)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def as_dict(self) -> dict[str, int]:
        with self.lock:
            return {
                "last_stream_milliseconds": self.last_stream_milliseconds,
                "requests": self.requests,
                "in_flight": self.in_flight,
                "peak_in_flight": self.peak_in_flight,
                "completed": self.completed,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
            }

    def reset(self) -> None:
        with self.lock:
            self.requests = 0
            self.peak_in_flight = self.in_flight
            self.completed = 0
            self.prompt_tokens = 0
            self.completion_tokens = 0


# ---------------------------------------------------------------------------------------------
# The child: a Starlette app served by uvicorn


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
    payload = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }
    return f"data: {json.dumps(payload)}\n\n".encode()


def _usage_chunk(model: str, usage: dict[str, int]) -> bytes:
    payload = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [],
        "usage": usage,
    }
    return f"data: {json.dumps(payload)}\n\n".encode()


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def build_app(
    mode: str,
    latency: float,
    text_file: Path | None = None,
    tokens_per_second: float = 500.0,
    tokens_per_chunk: int = 1,
) -> Any:
    """The Starlette app for `mode` (imported lazily: only the child needs Starlette)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    encoding = _encoding()
    stats = _Stats()
    stream_tokens: list[int] = []
    if mode == "stream":
        if text_file is None:
            raise ValueError("stream mode needs a text file")
        stream_tokens = encoding.encode(
            text_file.read_text(encoding="utf-8"), disallowed_special=()
        )
    elif mode != "summarizer":
        raise ValueError(f"unknown mode {mode!r}")

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    def pieces_for(body: dict[str, Any]) -> tuple[list[str], int]:
        """The answer's text pieces (one per stream event) and its token count."""
        if mode == "summarizer":
            users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
            material = summarizer_input(content_text(users[-1].get("content")) if users else "")
            answer = summary_of(material, encoding)
            answer_tokens = encoding.encode(answer, disallowed_special=())
            step = 16
            pieces = [
                answer[i : i + step * 4] for i in range(0, len(answer), step * 4)
            ]  # a few tokens per event; summaries are not paced
            return pieces, len(answer_tokens)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pieces = []
        size = max(1, tokens_per_chunk)
        for start in range(0, len(stream_tokens), size):
            data = encoding.decode_bytes(stream_tokens[start : start + size])
            pieces.append(decoder.decode(data))
        tail = decoder.decode(b"", final=True)
        if tail:
            pieces.append(tail)
        return pieces, len(stream_tokens)

    def prompt_tokens(body: dict[str, Any]) -> int:
        return sum(count(content_text(m.get("content"))) for m in body.get("messages") or [])

    async def stats_route(request: Request) -> Response:
        return JSONResponse(stats.as_dict())

    async def reset_route(request: Request) -> Response:
        stats.reset()
        return JSONResponse(stats.as_dict())

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "bench-model", "object": "model"}]})

    def leave(prompt: int, completion: int) -> None:
        with stats.lock:
            stats.in_flight -= 1
            stats.completed += 1
            stats.prompt_tokens += prompt
            stats.completion_tokens += completion

    async def chat(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except json.JSONDecodeError:
            return JSONResponse({"error": {"message": "invalid JSON body"}}, status_code=400)
        with stats.lock:
            stats.requests += 1
            stats.in_flight += 1
            stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
        streaming = bool(body.get("stream"))
        try:
            if latency:
                await asyncio.sleep(latency)
            model = str(body.get("model", "bench-model"))
            prompt = prompt_tokens(body)
            pieces, completion = pieces_for(body)
        except BaseException:
            leave(0, 0)
            raise
        if not streaming:
            leave(prompt, completion)
            message = {"role": "assistant", "content": "".join(pieces)}
            return JSONResponse(
                {
                    "id": "chatcmpl-bench",
                    "object": "chat.completion",
                    "created": 1_700_000_000,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": _usage(prompt, completion),
                }
            )
        with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        paced = mode == "stream" and tokens_per_second > 0
        seconds_per_piece = max(1, tokens_per_chunk) / tokens_per_second if paced else 0.0

        async def events() -> AsyncIterator[bytes]:
            try:
                yield _chunk(model, {"role": "assistant", "content": ""})
                started = time.monotonic()
                for number, piece in enumerate(pieces):
                    if paced:
                        wait = started + number * seconds_per_piece - time.monotonic()
                        if wait > 0:
                            await asyncio.sleep(wait)
                    if piece:
                        yield _chunk(model, {"content": piece})
                yield _chunk(model, {}, "stop")
                if paced:
                    with stats.lock:
                        took = time.monotonic() - started
                        stats.last_stream_milliseconds = round(took * 1000)
                if with_usage:
                    yield _usage_chunk(model, _usage(prompt, completion))
                yield b"data: [DONE]\n\n"
            finally:
                leave(prompt, completion)

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/stats", stats_route, methods=["GET"]),
            Route("/stats/reset", reset_route, methods=["POST"]),
        ]
    )


def _exit_when_parent_goes() -> None:
    """Block until stdin closes (the parent died or closed the pipe), then end the process."""
    try:
        while sys.stdin.buffer.read(1024):
            pass
    except (OSError, ValueError):
        pass
    os._exit(0)


def serve(argv: Sequence[str] | None = None) -> None:
    """The child's entry point: bind a free loopback port, print READY <port>, serve."""
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m bench.server_process")
    parser.add_argument("--mode", choices=("summarizer", "stream"), default="summarizer")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--text-file", type=Path)
    parser.add_argument("--tokens-per-second", type=float, default=500.0)
    parser.add_argument("--tokens-per-chunk", type=int, default=1)
    args = parser.parse_args(argv)
    app = build_app(
        args.mode, args.latency, args.text_file, args.tokens_per_second, args.tokens_per_chunk
    )
    # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose
    # protocol says TCP, and with Nagle on every answer on a kept-alive connection waits
    # ~40 ms for the client's delayed ACK (docs/adr/0052).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="critical", lifespan="off", access_log=False)

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if not self.should_exit:
                print(f"{READY_PREFIX}{port}", flush=True)

    threading.Thread(target=_exit_when_parent_goes, daemon=True).start()
    AnnouncingServer(config).run(sockets=[sock])


# ---------------------------------------------------------------------------------------------
# The parent's handle


class ServerProcess:
    """The server in a child process; a context manager that waits until it is ready.

    `ServerProcess(mode="summarizer", latency=0.02)` or
    `ServerProcess(mode="stream", text_file=path, tokens_per_second=500)`. On exit the child is
    killed and reaped; it also exits by itself if this process dies.
    """

    def __init__(
        self,
        mode: str = "summarizer",
        *,
        latency: float = 0.0,
        text_file: Path | str | None = None,
        tokens_per_second: float = 500.0,
        tokens_per_chunk: int = 1,
    ) -> None:
        if mode not in ("summarizer", "stream"):
            raise ValueError(f"unknown mode {mode!r}")
        if mode == "stream" and text_file is None:
            raise ValueError("stream mode needs text_file")
        self.mode = mode
        self.latency = latency
        self.text_file = Path(text_file) if text_file is not None else None
        self.tokens_per_second = tokens_per_second
        self.tokens_per_chunk = tokens_per_chunk
        self.process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._client: httpx.Client | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        """The URL to configure a client with (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int:
        """The child's process id."""
        if self.process is None:
            raise RuntimeError("the server is not running")
        return self.process.pid

    def command(self) -> list[str]:
        """The child's command line."""
        command = [
            sys.executable,
            "-m",
            "bench.server_process",
            "--mode",
            self.mode,
            "--latency",
            str(self.latency),
            "--tokens-per-second",
            str(self.tokens_per_second),
            "--tokens-per-chunk",
            str(self.tokens_per_chunk),
        ]
        if self.text_file is not None:
            command += ["--text-file", str(self.text_file)]
        return command

    def start(self) -> ServerProcess:
        """Start the child and return once it accepts connections; raises if it cannot."""
        root = Path(__file__).resolve().parents[1]
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - open while the child runs
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            self.command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=root,
            env=env,
        )
        ready: list[str] = []

        def read_ready() -> None:
            assert self.process is not None and self.process.stdout is not None
            ready.append(self.process.stdout.readline().decode("utf-8", "replace"))

        reader = threading.Thread(target=read_ready, daemon=True)
        reader.start()
        reader.join(START_TIMEOUT)
        line = ready[0] if ready else ""
        if not line.startswith(READY_PREFIX):
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait(timeout=30)
            self._stderr.seek(0)
            error = self._stderr.read().decode("utf-8", "replace")[-2000:]
            self.stop()
            raise RuntimeError(f"the benchmark server did not start: {line!r} {error}")
        self.port = int(line.removeprefix(READY_PREFIX))
        return self

    def stop(self) -> None:
        """Kill the child and wait for it."""
        if self._client is not None:
            self._client.close()
            self._client = None
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def stats(self) -> dict[str, int]:
        """The counters: requests, in_flight, peak_in_flight, completed (ended, whole or cut
        short), the prompt and completion tokens of ended requests, and how long the last paced
        stream took (last_stream_milliseconds; a slow reader makes it longer than planned)."""
        response = self._http().get(f"http://127.0.0.1:{self.port}/stats")
        response.raise_for_status()
        result: dict[str, int] = response.json()
        return result

    def reset_stats(self) -> None:
        """Zero the counters (the peak restarts from the requests in flight now)."""
        self._http().post(f"http://127.0.0.1:{self.port}/stats/reset").raise_for_status()

    def _http(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(timeout=30)
        return self._client

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


if __name__ == "__main__":
    serve()
