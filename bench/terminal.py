"""A real terminal for the TUI benchmark: an app in a private tmux server, typed into with
`send-keys` and read with `capture-pane`; plus the pure pieces of the keystroke probes.

Keystroke probes: a fixed marker is typed first (and waited for), then one probe character at
each fixed interval. Each capture of the screen is searched for the newest typed text it shows
(the last `WINDOW` characters typed up to a probe), so a probe counts as shown the first time
the screen holds it, and every earlier probe with it. The marker keeps even the first probe's
window long enough to be unique.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MARKER = "QZXJK"
"""Typed before the probes; WINDOW - 1 characters long, so even the first probe has a full
window."""
PROBE_ALPHABET = "bcdfghjklmnpqrstvwxz"
WINDOW = 6
"""Characters of typed text a probe is recognized by."""
POLL_SECONDS = 0.01
"""Pause between two captures of the screen."""


class TmuxMissingError(RuntimeError):
    """tmux is not installed; the TUI benchmark needs a real terminal."""


def require_tmux() -> str:
    """The path of tmux; TmuxMissingError with what to do when it is not installed."""
    path = shutil.which("tmux")
    if path is None:
        raise TmuxMissingError(
            "tmux is not installed: the TUI section runs the app in a real terminal. Install it "
            "(apt-get install tmux) or run `make bench`, which tries to."
        )
    return path


def probe_keys(count: int, avoid: Sequence[str] = (), seed: int = 0) -> str:
    """`count` probe characters such that every `WINDOW`-character window of MARKER + keys is
    unique and appears in none of the `avoid` texts (e.g. what the screen will show)."""
    for attempt in range(1000):
        generator = random.Random(seed + attempt)
        keys = "".join(generator.choice(PROBE_ALPHABET) for _ in range(count))
        windows = [
            window_ending(MARKER + keys, end)
            for end in range(len(MARKER) + 1, len(MARKER) + count + 1)
        ]
        if len(set(windows)) == len(windows) and not any(
            window in text for window in windows for text in avoid
        ):
            return keys
    raise RuntimeError("no probe sequence avoids the given texts")


def window_ending(typed: str, end: int) -> str:
    """The last `WINDOW` characters of `typed[:end]`."""
    return typed[max(0, end - WINDOW) : end]


def shown_count(screen: str, typed: str) -> int:
    """How many characters of `typed` the screen shows: the largest `end` whose window
    `window_ending(typed, end)` is on the screen (0 when none is). Only windows of full length
    count, so `typed` should start with MARKER."""
    for end in range(len(typed), WINDOW - 1, -1):
        if window_ending(typed, end) in screen:
            return end
    return 0


def cpu_seconds(stat: str, ticks_per_second: int) -> float:
    """User plus system CPU seconds from the text of /proc/PID/stat."""
    fields = stat[stat.rindex(")") + 2 :].split()
    # After "pid (comm) ", fields start at `state` (field 3); utime and stime are fields 14, 15.
    return (int(fields[11]) + int(fields[12])) / ticks_per_second


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds process `pid` has used so far."""
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    return cpu_seconds(stat, os.sysconf("SC_CLK_TCK"))


@dataclass
class ProbeResult:
    """Keystroke-to-screen latencies (seconds) and when the watched text first showed."""

    latencies: list[float] = field(default_factory=list)
    timeouts: int = 0
    """Probes never shown before the deadline (their latency is counted up to it)."""
    watched_at: float | None = None
    """monotonic() of the first capture where `watch` held, if it did."""


class Terminal:
    """One app in its own tmux server (private socket), `width` x `height` cells."""

    def __init__(self, width: int = 120, height: int = 40) -> None:
        self.tmux = require_tmux()
        self.socket = f"forge-bench-{os.getpid()}-{time.monotonic_ns()}"
        self.session = "bench"
        self.width = width
        self.height = height

    def run(self, *arguments: str) -> str:
        """One tmux command; its stdout."""
        completed = subprocess.run(
            [self.tmux, "-L", self.socket, *arguments],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
            env={k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")},
        )
        return completed.stdout

    def launch(self, command: str, environment: Mapping[str, str], cwd: Path) -> float:
        """Start `command` (a shell command line, run with `exec`) in a new detached session;
        returns monotonic() taken just before tmux was asked to start it."""
        settings = [f"-e{name}={value}" for name, value in environment.items()]
        started = time.monotonic()
        self.run(
            "new-session", "-d", "-s", self.session, "-x", str(self.width), "-y",
            str(self.height), *settings, "-c", str(cwd), f"exec {command}",
        )  # fmt: skip
        return started

    def pid(self) -> int:
        """The process running in the pane."""
        return int(self.run("display-message", "-p", "-t", self.session, "#{pane_pid}").strip())

    def capture(self) -> str:
        """The visible screen as text."""
        return self.run("capture-pane", "-p", "-t", self.session)

    def type(self, text: str) -> None:
        """Type `text` literally."""
        self.run("send-keys", "-t", self.session, "-l", text)

    def press(self, key: str) -> None:
        """Press one named key (e.g. "Enter")."""
        self.run("send-keys", "-t", self.session, key)

    def wait_for(
        self, shown: Callable[[str], bool], timeout: float, poll: float = POLL_SECONDS
    ) -> tuple[float, str]:
        """Capture until `shown(screen)`, every `poll` seconds; (monotonic() of that capture,
        the screen). TimeoutError with the last screen otherwise."""
        end = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < end:
            screen = self.capture()
            if shown(screen):
                return time.monotonic(), screen
            time.sleep(poll)
        raise TimeoutError(f"not shown within {timeout:.0f} s; last screen:\n{screen}")

    def probe(
        self,
        keys: str,
        interval: float,
        deadline: float,
        watch: Callable[[str], bool] | None = None,
    ) -> ProbeResult:
        """Type MARKER (waiting until it shows), then one key of `keys` every `interval`
        seconds, capturing the screen all along; stops when every key and `watch` have shown,
        or at monotonic() `deadline`."""
        self.type(MARKER)
        self.wait_for(lambda screen: MARKER in screen, max(1.0, deadline - time.monotonic()))
        result = ProbeResult()
        sent: list[float] = []
        shown_at: list[float | None] = [None] * len(keys)
        next_send = time.monotonic()
        while True:
            now = time.monotonic()
            if len(sent) < len(keys) and now >= next_send:
                self.type(keys[len(sent)])
                sent.append(time.monotonic())
                next_send += interval
            screen = self.capture()
            captured = time.monotonic()
            if watch is not None and result.watched_at is None and watch(screen):
                result.watched_at = captured
            count = shown_count(screen, MARKER + keys[: len(sent)]) - len(MARKER)
            for index in range(max(0, count)):
                if shown_at[index] is None:
                    shown_at[index] = captured
            finished = len(sent) == len(keys) and all(at is not None for at in shown_at)
            if finished and (watch is None or result.watched_at is not None):
                break
            if captured >= deadline:
                break
            time.sleep(POLL_SECONDS)
        for index, sent_at in enumerate(sent):
            shown = shown_at[index]
            if shown is None:
                result.timeouts += 1
                shown = deadline
            result.latencies.append(shown - sent_at)
        result.timeouts += len(keys) - len(sent)
        return result

    def close(self) -> None:
        """Kill the tmux server and whatever runs in it."""
        subprocess.run(
            [self.tmux, "-L", self.socket, "kill-server"], capture_output=True, check=False
        )

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
