"""Starting Forge at 80x24 in a private tmux server, for the daily-use tests of issue 35
(this module holds no tests of its own)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tests.support.openai_server import OpenAIServer
from tests.tui.test_e2e_tmux import DEADLINE_SECONDS, REPOSITORY, Tmux

WIDTH, HEIGHT = 80, 24


def start_forge(
    tmux: Tmux,
    llm_server: OpenAIServer,
    workspace: Path,
    *,
    arguments: str = "",
    environment: dict[str, str] | None = None,
    after: str = "",
) -> None:
    """Run `forge` in `workspace` at 80x24 against `llm_server` (`after`: a shell command run
    when it exits, in the same pane) and wait for its first screen."""
    values = {
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "sk-e2e-test-key",
        "PYTHONPATH": str(REPOSITORY),
        "TERM": "xterm-256color",
        "HOME": os.environ["HOME"],
        **{name: os.environ[name] for name in os.environ if name.startswith("XDG_")},
        **(environment or {}),
    }
    settings = [f"-e{name}={value}" for name, value in values.items()]
    command = f"{sys.executable} -m forge --workspace {workspace} {arguments}"
    if after:
        command += f"; {after}"
    tmux.run(
        "new-session", "-d", "-s", tmux.session, "-x", str(WIDTH), "-y", str(HEIGHT),
        *settings, "-c", str(workspace), command,
    )  # fmt: skip
    tmux.run("set-option", "-t", tmux.session, "remain-on-exit", "on")
    tmux.wait_for("Ask Forge")


def send_bytes(tmux: Tmux, data: str) -> None:
    """Write `data` to the pane as if the terminal sent it (mouse reports, focus events)."""
    tmux.run("send-keys", "-t", tmux.session, "-H", *(f"{byte:02x}" for byte in data.encode()))


def drag(tmux: Tmux, start: tuple[int, int], end: tuple[int, int]) -> None:
    """A left-button drag from `start` to `end` (0-based column, row), as SGR mouse reports."""
    (x1, y1), (x2, y2) = start, end
    send_bytes(tmux, f"\x1b[<0;{x1 + 1};{y1 + 1}M")
    send_bytes(tmux, f"\x1b[<32;{(x1 + x2) // 2 + 1};{y2 + 1}M")
    send_bytes(tmux, f"\x1b[<32;{x2 + 1};{y2 + 1}M")
    send_bytes(tmux, f"\x1b[<0;{x2 + 1};{y2 + 1}m")


def wait_for_file_text(path: Path, text: str) -> str:
    """Read `path` until it holds `text`; fail with what it held."""
    end = time.monotonic() + DEADLINE_SECONDS
    held = ""
    while time.monotonic() < end:
        held = path.read_text(errors="replace") if path.exists() else ""
        if text in held:
            return held
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never reached {path}; it ends with:\n{held[-600:]!r}")
