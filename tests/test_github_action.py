"""The GitHub Action's script (scripts/action_run.py) run locally as the runner would: inputs
as INPUT_* variables, a fake `GITHUB_OUTPUT` file, Forge against the loopback server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.agent.sandbox.support import needs_bubblewrap
from tests.headless.test_headless import API_KEY, REPO_ROOT
from tests.support.action_runner import ActionRun, runner_environment
from tests.support.action_runner import run_action as run_composite_action
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.trust.test_forge_run_trust import hostile

SCRIPT = REPO_ROOT / "scripts" / "action_run.py"


def outputs_of(path: Path) -> dict[str, str]:
    """`name<<DELIM\\nvalue\\nDELIM` entries, as the runner parses them."""
    found = {}
    for match in re.finditer(r"^(\S+)<<(\S+)\n(.*?)\n\2$", path.read_text(), re.M | re.S):
        found[match.group(1)] = match.group(3)
    return found


def run_action(
    server: OpenAIServer, workspace: Path, tmp_path: Path, **inputs: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    output = tmp_path / "github_output"
    output.write_text("")
    environment = dict(os.environ)
    environment.update(
        PYTHONPATH=str(REPO_ROOT),
        GITHUB_OUTPUT=str(output),
        RUNNER_TEMP=str(tmp_path / "runner_temp"),
        INPUT_BASE_URL=server.base_url,
        INPUT_API_KEY=API_KEY,
        FORGE_LLM__MAX_RETRIES="0",
    )
    environment.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    completed = subprocess.run(
        [sys.executable, str(SCRIPT)],
        cwd=workspace,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return completed, outputs_of(output)


def test_the_action_runs_forge_and_sets_its_outputs(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("list_files", {"path": "."})], prompt_tokens=1000),
        Text(f"Two lines:\nall good (not {API_KEY})", prompt_tokens=1000, completion_tokens=10),
    )
    completed, outputs = run_action(
        llm_server, workspace, tmp_path, prompt="review this", max_turns="5", mode="read-only"
    )

    assert completed.returncode == 0, completed.stderr
    assert outputs["exit-code"] == "0"
    assert outputs["final-message"] == "Two lines:\nall good (not ***)"
    assert float(outputs["cost"]) > 0
    stream = Path(outputs["stream-file"])
    records = [json.loads(line) for line in stream.read_text().splitlines()]
    assert records[0]["type"] == "init" and records[0]["mode"] == "read-only"
    assert records[-1]["type"] == "result" and records[-1]["subtype"] == "success"
    assert llm_server.requests[0].messages[1]["content"] == "review this"
    everything = completed.stdout + completed.stderr + stream.read_text()
    assert API_KEY not in everything + str(outputs)
    assert llm_server.requests[0].headers.get("authorization") == f"Bearer {API_KEY}"


def test_the_action_reports_a_limit_as_its_exit_code(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.txt").write_text("a")
    llm_server.responder = lambda request: ToolCalls([Call("read_file", {"path": "a.txt"})])
    completed, outputs = run_action(llm_server, workspace, tmp_path, prompt="loop", max_turns="2")

    assert completed.returncode == 3
    assert outputs["exit-code"] == "3"
    assert len(llm_server.requests) == 2


def test_a_second_run_that_fails_before_answering_reports_no_earlier_answer(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    llm_server.enqueue(Text("the first step's answer"))
    first, first_outputs = run_action(llm_server, workspace, tmp_path, prompt="one")
    # Forge stops at its command line (exit 2), before it writes anything.
    second, second_outputs = run_action(
        llm_server, workspace, tmp_path, prompt="two", args="--max-turns many"
    )

    assert first.returncode == 0 and first_outputs["final-message"] == "the first step's answer"
    assert second.returncode == 2
    assert second_outputs["exit-code"] == str(second.returncode)
    assert second_outputs["final-message"] == ""
    assert second_outputs["stream-file"] == first_outputs["stream-file"]  # one RUNNER_TEMP
    stream = Path(second_outputs["stream-file"]).read_text()
    assert "the first step's answer" not in stream


def test_the_action_never_trusts_the_workspace_unless_asked(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    hostile(workspace)  # a pull request's .forge/mcp.yaml: `sh -c 'echo ran > FLAG'`
    llm_server.enqueue(ToolCalls([Call("task_completion", {"result": "done"})]))
    completed, outputs = run_action(llm_server, workspace, tmp_path, prompt="x")
    assert completed.returncode == 0 and outputs["exit-code"] == "0", completed.stderr
    assert not (workspace / "FLAG").exists()  # untrusted: the server never started
    assert "forge trust" in completed.stderr  # and the run said why
    llm_server.enqueue(ToolCalls([Call("task_completion", {"result": "done"})]))
    trusted, outputs = run_action(
        llm_server, workspace, tmp_path, prompt="x", trust_workspace="true"
    )
    assert trusted.returncode == 0 and outputs["exit-code"] == "0", trusted.stderr
    assert (workspace / "FLAG").read_text() == "ran\n"  # opted in: it ran
    extra, outputs = run_action(
        llm_server, workspace, tmp_path, prompt="x", args="--definitely-not-a-flag"
    )
    assert extra.returncode == 2 and outputs["exit-code"] == "2"  # extra args reach forge
    missing, outputs = run_action(llm_server, workspace, tmp_path)
    assert missing.returncode == 2 and "prompt" in missing.stderr
    assert len(llm_server.requests) == 2


def test_action_yml_wires_every_input_to_the_script() -> None:
    action = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    wired = {name[len("INPUT_") :].lower().replace("_", "-") for name in step["env"]}
    assert wired == set(action["inputs"]) - {"python-version", "artifact-name"}
    assert set(action["outputs"]) == {
        "final-message",
        "cost",
        "exit-code",
        "session-id",
        "stream-file",
    }
    names = [step.get("name", "") for step in action["runs"]["steps"]]
    assert names.index("Install Forge from this action's ref") < names.index("forge run")
    assert "inputs." not in step["run"]  # inputs only through env: no script injection
    upload = action["runs"]["steps"][-1]
    assert upload["uses"].startswith("actions/upload-artifact") and upload["if"] == "always()"
    assert action["inputs"]["trust-workspace"]["default"] == "false"


@needs_bubblewrap
def test_sandbox_network_lets_the_models_commands_reach_the_network(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    port = llm_server.base_url.split(":")[2].split("/")[0]
    command = (
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', "
        f"{port}), timeout=3); print('connected')\""
    )
    for network in ("false", "true"):
        llm_server.enqueue(
            ToolCalls([Call("execute_command", {"command": command})]),
            ToolCalls([Call("task_completion", {"result": "done"})]),
        )
        completed, outputs = run_action(
            llm_server, workspace, tmp_path, prompt="x", mode="auto", sandbox_network=network
        )
        assert completed.returncode == 0, completed.stderr
        stream = Path(outputs["stream-file"]).read_text()
        finished = [
            json.loads(line)
            for line in stream.splitlines()
            if json.loads(line)["type"] == "tool_call_finished"
        ]
        assert ("connected" in finished[0]["result"]) is (network == "true")
        init = json.loads(stream.splitlines()[0])
        assert init["sandbox"]["network"] is (network == "true")


RUNNER_SKIPS = (
    "Install Forge from this action's ref",  # the test's environment has it
    "Install bubblewrap (the sandbox of the model's commands)",
)


def runner_run(
    server: OpenAIServer, checkout: Path, tmp_path: Path, actor: str, **inputs: str
) -> ActionRun:
    """action.yml's steps run by the stand-in runner, as `actor` triggered them."""
    environment = runner_environment(
        Path(sys.executable).parent,
        PYTHONPATH=str(REPO_ROOT),
        GITHUB_ACTOR=actor,
        GITHUB_TRIGGERING_ACTOR=actor,
        FORGE_LLM__MAX_RETRIES="0",
    )
    inputs = {"base-url": server.base_url, "api-key": API_KEY, **inputs}
    return run_composite_action(
        REPO_ROOT,
        inputs,
        environment,
        workspace=checkout,
        runner_temp=tmp_path / "runner_temp",
        skip=RUNNER_SKIPS,
    )


def test_action_yml_runs_for_an_allowed_actor(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    project = workspace / "project"
    project.mkdir()
    (project / "notes.txt").write_text("notes\n")
    llm_server.enqueue(
        ToolCalls(
            [
                Call("read_file", {"path": "notes.txt"}),
                Call("execute_command", {"command": "rm -rf build"}, id="call_rm"),
            ]
        ),
        Text("Read it.\n```\n<img src=x>\n```", prompt_tokens=1000, completion_tokens=10),
    )
    run = runner_run(
        llm_server,
        workspace,
        tmp_path,
        "octocat",
        prompt="read notes.txt",
        **{
            "working-directory": "project",
            "output-file": "answer.md",
            "allow-users": "someone, OctoCat",
        },
    )

    assert run.exit_code == 0, run.stderr
    assert run.ran == ["forge run"]
    # Every output the step sets is declared, and every declared output is set.
    assert set(run.step_outputs["run"]) == set(run.outputs)
    assert run.outputs["exit-code"] == "0"
    assert run.outputs["final-message"].startswith("Read it.")
    assert (workspace / "answer.md").read_text() == run.outputs["final-message"]
    stream = Path(run.outputs["stream-file"])
    assert stream == tmp_path / "runner_temp" / "forge-run" / "stream.jsonl"
    records = [json.loads(line) for line in stream.read_text().splitlines()]
    assert records[0]["type"] == "init" and records[0]["workspace"] == str(project)
    assert run.outputs["session-id"] == records[-1]["session_id"] != ""
    # The step summary: ending, cost, the refused command, the final message fenced.
    assert "success" in run.summary and "$0.0" in run.summary
    assert "  - `execute_command: rm -rf build`" in run.summary
    assert "````text\nRead it.\n```\n<img src=x>\n```\n````" in run.summary
    assert API_KEY not in run.summary + run.stderr + str(run.outputs)


def test_action_yml_refuses_an_actor_not_allowed_before_sending_anything(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    run = runner_run(
        llm_server, workspace, tmp_path, "mallory", prompt="x", **{"allow-users": "octocat"}
    )
    bot = runner_run(
        llm_server,
        workspace,
        tmp_path,
        "evil[bot]",
        prompt="x",
        **{"allow-users": "octocat", "allow-bots": "dependabot[bot]"},
    )

    for refused, actor in ((run, "mallory"), (bot, "evil[bot]")):
        assert refused.exit_code == 2
        assert f"actor '{actor}' is not allowed to run Forge here" in refused.stderr
        assert refused.outputs["exit-code"] == "2" and refused.outputs["session-id"] == ""
        assert "Not run" in refused.summary
    assert not llm_server.requests  # nothing was sent
    llm_server.enqueue(Text("fine"))
    allowed = runner_run(
        llm_server, workspace, tmp_path, "dependabot[bot]", prompt="x", **{"allow-bots": "*"}
    )
    assert allowed.exit_code == 0 and allowed.outputs["final-message"] == "fine"
