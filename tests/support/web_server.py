"""A real HTTP server on 127.0.0.1 serving scripted pages, for `web_fetch` tests.

`WebServer.page(path, body, content_type)` serves a body; `WebServer.redirect(path, target)`
answers 302 with a Location. Every request path is recorded in `requests`. Runs the standard
library's threading HTTP server in a background thread; use it as a context manager.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


@dataclass(frozen=True)
class Route:
    """What one path answers."""

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...]


class WebServer:
    """Scripted pages on a loopback port (see module docstring)."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                route = server.routes.get(self.path)
                if route is None:
                    route = Route(404, b"not found", (("Content-Type", "text/plain"),))
                self.send_response(route.status)
                for name, value in route.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                self.wfile.write(route.body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def url(self, path: str) -> str:
        """The full URL of `path`."""
        return self.base_url + path

    def page(self, path: str, body: str | bytes, content_type: str = "text/html") -> None:
        """Serve `body` at `path` with status 200."""
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = Route(200, data, (("Content-Type", content_type),))

    def redirect(self, path: str, target: str, status: int = 302) -> None:
        """Answer `path` with a redirect to `target`."""
        self.routes[path] = Route(status, b"", (("Location", target),))

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
