"""The GitHub Action's run step (action.yml): check the actor, run `forge run` from the
action's inputs, write its outputs and the step summary. Tested as the runner runs it, from
action.yml's own steps with a fake `GITHUB_*` environment (tests/test_github_action.py).

Inputs arrive as environment variables (`INPUT_PROMPT`, `INPUT_PROMPT_FILE`, `INPUT_MODEL`,
`INPUT_BASE_URL`, `INPUT_API_KEY`, `INPUT_MODE`, `INPUT_MAX_TURNS`, `INPUT_MAX_BUDGET_USD`,
`INPUT_ARGS`, `INPUT_TRUST_WORKSPACE`, `INPUT_SANDBOX_NETWORK`, `INPUT_WORKING_DIRECTORY`,
`INPUT_OUTPUT_FILE`, `INPUT_ALLOW_USERS`, `INPUT_ALLOW_BOTS`). The API key reaches Forge only
through its environment (`OPENAI_API_KEY`), never the command line, and Forge masks it in
everything it prints. `--trust-workspace` is passed only when `INPUT_TRUST_WORKSPACE` is
"true": a pull request's `.forge/` is its author's, not yours.

The actor check: with `allow-users` and `allow-bots` both empty there is none. When either is
set, the actor who triggered the run (`GITHUB_TRIGGERING_ACTOR`, else `GITHUB_ACTOR`) must be
listed in `allow-users`, or be a bot (a login ending in `[bot]`) listed in `allow-bots` (`*`
allows every bot); anyone else is refused with a message, exit 2, before Forge starts — no
request is sent.

Outputs (`$GITHUB_OUTPUT`, every one declared in action.yml): `final-message`, `cost` (USD,
empty when unknown), `exit-code`, `session-id` (the saved session's ID; empty when the run
never started), `stream-file` (Forge's own records, forge-jsonl, at
`$RUNNER_TEMP/forge-run/stream.jsonl`, for the artifact upload). The step summary
(`$GITHUB_STEP_SUMMARY`) gets the ending, the cost, the refused calls and the final message
(as a code block: the model's text never becomes markup on the run's page). `output-file`
also receives the final message. The step exits with Forge's exit code
(docs/adr/0015-headless-output.md). The files behind the outputs are removed before each run,
so a run never reports an earlier step's answer.
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


def _names(text: str) -> set[str]:
    return {name.lower() for name in text.replace(",", " ").split() if name}


def refusal() -> str | None:
    """Why the triggering actor may not run the action (None: allowed, or no check asked)."""
    users, bots = _names(_input("ALLOW_USERS")), _names(_input("ALLOW_BOTS"))
    if not users and not bots:
        return None
    actor = os.environ.get("GITHUB_TRIGGERING_ACTOR") or os.environ.get("GITHUB_ACTOR", "")
    login = actor.strip().lower()
    if login and login in users:
        return None
    if login.endswith("[bot]") and ("*" in bots or login in bots):
        return None
    who = f"actor {actor!r}" if actor else "an unknown actor"
    return (
        f"{who} is not allowed to run Forge here: not in allow-users"
        + (" or allow-bots" if login.endswith("[bot]") else "")
        + "; nothing was sent to the model"
    )


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


def _fenced(text: str) -> str:
    """`text` as a Markdown code block whose fence no line of it can close."""
    longest = max((len(run) for run in text.split("\n") if set(run) == {"`"}), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def step_summary(result: dict[str, Any], final: str, exit_code: int) -> str:
    """The step summary: ending, exit code, cost, refused calls, the final message."""
    cost = result.get("total_cost_usd")
    lines = [
        "### Forge",
        "",
        f"- ending: `{result.get('subtype', 'no result')}` (exit {exit_code})",
        f"- cost: {'unknown (a model has no price)' if cost is None else f'${cost:.4f}'}",
    ]
    if session := result.get("session_id"):
        lines.append(f"- session: `{session}`")
    denials = result.get("permission_denials") or []
    if denials:
        lines.append(f"- refused calls ({len(denials)}):")
        for denial in denials:  # "execute_command: rm -rf build"
            what = denial.get("arguments") or denial.get("tool_name", "")
            lines.append("  - `{}`".format(str(what).replace("`", "'").replace("\n", " ")))
    lines += ["", "#### Final message", "", _fenced(final) if final else "(none)", ""]
    return "\n".join(lines) + "\n"


def write_summary(text: str) -> None:
    """Append `text` to `$GITHUB_STEP_SUMMARY` (nothing when the runner gave none)."""
    if target := os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(text)


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
    stream_dir = Path(os.environ.get("RUNNER_TEMP") or ".").expanduser().resolve() / "forge-run"
    stream_dir.mkdir(parents=True, exist_ok=True)
    stream = stream_dir / "stream.jsonl"
    # Two Forge steps in one job share RUNNER_TEMP: a step that fails before answering must
    # not report the previous step's answer.
    for previous in (stream, stream_dir / "final-message.md"):
        previous.unlink(missing_ok=True)
    stopped = {"final-message": "", "cost": "", "exit-code": str(USAGE_ERROR)}
    stopped |= {"session-id": "", "stream-file": str(stream)}
    if why := refusal():
        print(f"::error title=Forge not run::{why}", file=sys.stderr)
        write_outputs(stopped)
        write_summary(f"### Forge\n\nNot run: {why}.\n")
        return USAGE_ERROR
    working_directory = Path(_input("WORKING_DIRECTORY") or ".").expanduser()
    try:
        if not working_directory.is_dir():
            raise ValueError(f"working-directory {working_directory} is not a directory")
        command, prompt = forge_command(stream_dir)
    except ValueError as error:
        print(f"forge action: {error}", file=sys.stderr)
        write_outputs(stopped)
        return USAGE_ERROR
    with stream.open("w", encoding="utf-8") as out:
        completed = subprocess.run(
            command,
            input=prompt,
            stdout=out,
            env=forge_environment(),
            cwd=working_directory,
            text=True,
            check=False,
        )
    result = last_result(stream)
    cost = result.get("total_cost_usd")
    final_file = stream_dir / "final-message.md"
    final = final_file.read_text(encoding="utf-8") if final_file.is_file() else ""
    if output_file := _input("OUTPUT_FILE"):
        Path(output_file).expanduser().write_text(final, encoding="utf-8")
    write_outputs(
        {
            "final-message": final,
            "cost": "" if cost is None else f"{cost}",
            "exit-code": str(completed.returncode),
            "session-id": str(result.get("session_id", "")),
            "stream-file": str(stream),
        }
    )
    write_summary(step_summary(result, final, completed.returncode))
    summary = result.get("subtype", "no result")
    print(f"forge action: {summary}, exit {completed.returncode}, cost {cost}", file=sys.stderr)
    return completed.returncode


if __name__ == "__main__":
    sys.exit(main())
