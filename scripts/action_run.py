"""The GitHub Action's step (action.yml): run `forge run` from the action's inputs and write
its outputs. Tested locally with a fake `GITHUB_OUTPUT` (tests/test_github_action.py).

Inputs arrive as environment variables (`INPUT_PROMPT`, `INPUT_PROMPT_FILE`, `INPUT_MODEL`,
`INPUT_BASE_URL`, `INPUT_API_KEY`, `INPUT_MODE`, `INPUT_MAX_TURNS`, `INPUT_MAX_BUDGET_USD`,
`INPUT_ARGS`, `INPUT_TRUST_WORKSPACE`, `INPUT_SANDBOX_NETWORK`, `INPUT_STREAM_FILE`). The API
key reaches Forge only through its environment (`OPENAI_API_KEY`), never the command line, and
Forge masks it in everything it prints. `--trust-workspace` is passed only when
`INPUT_TRUST_WORKSPACE` is "true": a pull request's `.forge/` is its author's, not yours.

Outputs (`$GITHUB_OUTPUT`): `final-message`, `cost` (USD, empty when unknown), `exit-code`,
`stream-file` (the stream-json records, for the artifact upload). The step exits with
Forge's exit code (docs/adr/0015-headless-output.md). The files behind the outputs are removed
before each run, so a run never reports an earlier step's answer.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

USAGE_ERROR = 2


def _input(name: str) -> str:
    return os.environ.get(f"INPUT_{name}", "").strip()


def forge_command(stream_dir: Path) -> tuple[list[str], str | None]:
    """The `forge run` command line for the inputs, and the prompt to send on stdin."""
    command = [sys.executable, "-m", "forge", "run", "--output-format", "forge-jsonl"]
    command += ["--output-last-message", str(stream_dir / "final-message.md")]
    for flag, name in (
        ("--model", "MODEL"),
        ("--mode", "MODE"),
        ("--max-turns", "MAX_TURNS"),
        ("--max-budget-usd", "MAX_BUDGET_USD"),
    ):
        if value := _input(name):
            command += [flag, value]
    if _input("TRUST_WORKSPACE").lower() == "true":
        command.append("--trust-workspace")
    command += shlex.split(_input("ARGS"))
    prompt, prompt_file = os.environ.get("INPUT_PROMPT", ""), _input("PROMPT_FILE")
    if prompt.strip() and prompt_file:
        raise ValueError("give the action `prompt` or `prompt-file`, not both")
    if prompt_file:
        return [*command, "--task-file", prompt_file], None
    if not prompt.strip():
        raise ValueError("the action needs a `prompt` or a `prompt-file`")
    return [*command, "-"], prompt  # on stdin: no length limit, not in the process list


def forge_environment() -> dict[str, str]:
    """The environment Forge runs in: the key and base URL from the inputs."""
    environment = dict(os.environ)
    for name in [key for key in environment if key.startswith("INPUT_")]:
        del environment[name]  # the key must not linger where a tool's `env` could print it
    if key := _input("API_KEY"):
        environment["OPENAI_API_KEY"] = key
    if base_url := _input("BASE_URL"):
        environment["OPENAI_BASE_URL"] = base_url
    # The model's commands run in the sandbox without network unless asked (docs/adr/0053).
    network = _input("SANDBOX_NETWORK").lower() == "true"
    environment["FORGE_TOOLS__SANDBOX__NETWORK"] = "true" if network else "false"
    return environment


def last_result(stream: Path) -> dict[str, Any]:
    """The stream's `result` record ({} when the run ended before writing one)."""
    try:
        lines = stream.read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("type") == "result":
            return record
    return {}


def write_outputs(values: dict[str, str]) -> None:
    """Append `values` to `$GITHUB_OUTPUT` (multi-line values with a random delimiter)."""
    target = os.environ.get("GITHUB_OUTPUT")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            delimiter = f"FORGE_{secrets.token_hex(8)}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def main() -> int:
    """Run Forge, write the outputs; Forge's exit code."""
    stream_dir = (
        Path(_input("STREAM_DIR") or os.environ.get("RUNNER_TEMP") or ".").expanduser()
        / "forge-run"
    )
    stream_dir.mkdir(parents=True, exist_ok=True)
    stream = stream_dir / "stream.jsonl"
    # Two Forge steps in one job share RUNNER_TEMP: a step that fails before answering must
    # not report the previous step's answer.
    for previous in (stream, stream_dir / "final-message.md"):
        previous.unlink(missing_ok=True)
    try:
        command, prompt = forge_command(stream_dir)
    except ValueError as error:
        print(f"forge action: {error}", file=sys.stderr)
        write_outputs(
            {
                "final-message": "",
                "cost": "",
                "exit-code": str(USAGE_ERROR),
                "stream-file": str(stream),
            }
        )
        return USAGE_ERROR
    with stream.open("w", encoding="utf-8") as out:
        completed = subprocess.run(
            command, input=prompt, stdout=out, env=forge_environment(), text=True, check=False
        )
    result = last_result(stream)
    cost = result.get("total_cost_usd")
    final_file = stream_dir / "final-message.md"
    final = final_file.read_text(encoding="utf-8") if final_file.is_file() else ""
    write_outputs(
        {
            "final-message": final,
            "cost": "" if cost is None else f"{cost}",
            "exit-code": str(completed.returncode),
            "stream-file": str(stream),
        }
    )
    summary = result.get("subtype", "no result")
    print(f"forge action: {summary}, exit {completed.returncode}, cost {cost}", file=sys.stderr)
    return completed.returncode


if __name__ == "__main__":
    sys.exit(main())
