"""A hostile MCP server for the tests: a real stdio process speaking MCP's JSON-RPC by hand,
so it can send what the SDK's own server never would.

It lists the tools in the JSON file named by $HOSTILE_TOOLS (raw objects, sent as they are:
huge schemas, malformed entries, colliding names), answers `tools/call` with the tool's name
and arguments, and first writes $HOSTILE_STDERR_BYTES bytes to stderr (then a last line,
"stderr ends here").
"""

from __future__ import annotations

import json
import os
import sys


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    noise = int(os.environ.get("HOSTILE_STDERR_BYTES", "0"))
    line = b"noise " * 1000 + b"\n"
    while noise > 0:
        sys.stderr.buffer.write(line[: min(noise, len(line))])
        noise -= len(line)
    sys.stderr.buffer.write(b"stderr ends here\n")
    sys.stderr.flush()
    with open(os.environ["HOSTILE_TOOLS"], encoding="utf-8") as handle:
        tools = json.load(handle)
    for raw in sys.stdin:
        request = json.loads(raw)
        method, ident = request.get("method"), request.get("id")
        if ident is None:
            continue  # a notification
        if method == "initialize":
            version = request["params"].get("protocolVersion", "2025-06-18")
            result: dict[str, object] = {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            params = request["params"]
            text = f"called {params['name']} with {json.dumps(params.get('arguments', {}))}"
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        elif method == "ping":
            result = {}
        else:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": method}})
            continue
        send({"jsonrpc": "2.0", "id": ident, "result": result})


if __name__ == "__main__":
    main()
