"""Secrets the process knows are masked in command output before the model sees it
(issue 20): `StreamRedactor` on pieces split anywhere, `execute_command` with a real
subprocess printing a key across two writes, and `forge run` where the model runs
`cat config.yaml` and the next request to the server holds no key."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.config.secrets import KNOWN_SECRETS, REDACTED, SecretSet, StreamRedactor
from tests.agent.tools.support import call_tool
from tests.headless.test_headless import forge_run, jsonl
from tests.support.openai_server import Call, OpenAIServer, ToolCalls

KEY = "sk-live-7c1d2e3f4a5b6c7d"
OTHER = "sk-live-7c1d-other-value"


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13])
def test_a_secret_split_anywhere_is_masked_and_nothing_else_is_lost(size: int) -> None:
    secrets = SecretSet()
    secrets.add([KEY, OTHER])
    text = f"key={KEY}\nalmost sk-live-7c1d2e but not\nother={OTHER}\nend sk-li"
    redactor = StreamRedactor(secrets)
    pieces = [redactor.feed(text[i : i + size]) for i in range(0, len(text), size)]
    out = "".join(pieces) + redactor.flush()
    assert out == (f"key={REDACTED}\nalmost sk-live-7c1d2e but not\nother={REDACTED}\nend sk-li")
    assert not any(KEY in piece or OTHER in piece for piece in pieces)


def test_only_a_possible_start_of_a_secret_is_held_back() -> None:
    secrets = SecretSet()
    secrets.add([KEY])
    redactor = StreamRedactor(secrets)
    assert redactor.feed("plain output\n") == "plain output\n"
    assert redactor.feed("then sk-li") == "then "
    assert redactor.feed("ve-nope\n") == "sk-live-nope\n"


async def test_execute_command_masks_a_known_key_printed_in_two_writes(workspace: Path) -> None:
    KNOWN_SECRETS.add([KEY])
    streamed: list[str] = []
    command = f"printf '%s' '{KEY[:9]}'; sleep 0.3; printf '%s\\n' '{KEY[9:]}'; echo done"
    result = await call_tool(
        "execute_command", workspace, on_output=streamed.append, command=command
    )
    assert result.content == f"{REDACTED}\ndone\n[exit code 0]"
    assert KEY not in "".join(streamed)
    assert "".join(streamed) == f"{REDACTED}\ndone\n"


def test_forge_run_never_sends_the_configured_key_to_the_model(
    llm_server: OpenAIServer, workspace: Path, isolated_environment: Path
) -> None:
    config = isolated_environment / "config" / "forge" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(f"llm:\n  api_key: {KEY}\n")
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": f"cat '{config}'; env"})]),
        ToolCalls([Call("task_completion", {"result": "read it"})]),
    )
    # Unconfined: the sandbox hides the config file (tests/agent/sandbox); this is the
    # redaction that still holds where no sandbox runs.
    result = forge_run(
        llm_server,
        workspace,
        "--yes",
        "--output",
        "jsonl",
        "show the config",
        env={"FORGE_TOOLS__SANDBOX__MODE": "off"},
    )

    assert result.returncode == 0, result.stderr
    finished = [r for r in jsonl(result) if r["type"] == "tool_call_finished"]
    assert f"api_key: {REDACTED}" in finished[0]["result"]
    second = llm_server.requests[1].text()
    assert f"api_key: {REDACTED}" in second
    for request in llm_server.requests:
        assert KEY not in request.text()
