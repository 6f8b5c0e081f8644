"""/export html (issue 42): a self-contained page that Debian's `chromium` opens headless
without a single network request — every request it tries goes to a recording proxy on
127.0.0.1 — even when an answer holds a remote image and a script. No skip: without chromium
(`.ci/run` installs it) this test fails."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import threading
from pathlib import Path

from forge.agent.history.session_file import SessionStore
from forge.context.conversation import Conversation
from forge.llm.messages import assistant, system, user
from forge.tui.transcript_export import export_session

BROWSER_OWN = re.compile(
    rb"^(CONNECT|GET|POST) (https?://)?[a-z0-9.-]*\b(google\.com|gvt1\.com|googleapis\.com|"
    rb"gstatic\.com)[:/]"
)
"""Chromium's own requests, made whatever page is open."""


def recording_proxy() -> tuple[socket.socket, list[bytes]]:
    """A listening socket on 127.0.0.1 that records the first bytes of every connection."""
    server = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(2)
                try:
                    seen.append(connection.recv(1024) or b"(connected)")
                except OSError:
                    seen.append(b"(connected)")

    threading.Thread(target=serve, daemon=True).start()
    return server, seen


def test_the_html_opens_in_headless_chromium_with_no_network_request(
    tmp_path: Path, workspace: Path
) -> None:
    browser = shutil.which("chromium")
    assert browser is not None, "chromium is required (apt-get install chromium; .ci/run does)"
    server, seen = recording_proxy()
    port = server.getsockname()[1]
    store = SessionStore(tmp_path / "sessions")
    log = store.create(workspace, "gpt-4o")
    conversation = Conversation()
    log.attach(conversation)
    conversation.append(system("You are Forge."))
    conversation.append(user("show me a picture"))
    conversation.append(
        assistant(
            f"Here: ![cat](http://127.0.0.1:{port}/cat.png) and "
            f"<script>fetch('http://127.0.0.1:{port}/x')</script> **marker-words**"
        )
    )
    page = tmp_path / "session.html"
    page.write_text(export_session(store, workspace, log.id, "html"))
    assert "<script>" not in page.read_text()  # the answer's script is text
    process = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            f"--proxy-server=http://127.0.0.1:{port}",
            "--proxy-bypass-list=<-loopback>",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=3000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    server.close()
    assert process.returncode == 0, process.stderr[-2000:]
    assert "<strong>marker-words</strong>" in process.stdout  # the page was rendered
    assert "show me a picture" in process.stdout
    # The browser's own traffic (time sync, component updates, sign-in) goes to Google's
    # hosts whatever page is open; everything else would be the page's.
    from_page = [request for request in seen if not BROWSER_OWN.search(request.split(b"\r\n")[0])]
    assert from_page == []  # not one request left the page
