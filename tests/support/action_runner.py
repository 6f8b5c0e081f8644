"""A small stand-in for the GitHub runner: it runs a composite action's `run:` steps from its
`action.yml` as the runner does — `${{ inputs.* }}` (with the defaults), `github.*`,
`runner.*` and `steps.<id>.outputs.*` expressions expanded, each step in `bash --noprofile
--norc -eo pipefail`, a fresh `GITHUB_OUTPUT` file per step, one `GITHUB_STEP_SUMMARY` — and
resolves the action's declared outputs from its steps' outputs.

Steps that `uses:` another action (setup-python, upload-artifact) are not run, nor the steps
the caller names in `skip` (installing what the test's environment already has).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")
OUTPUT_ENTRY = re.compile(r"^(\S+)<<(\S+)\n(.*?)\n\2$", re.M | re.S)


@dataclass
class ActionRun:
    """What one run of the action left: per step its exit code and outputs, the action's
    outputs, the step summary, and the run steps' stderr."""

    exit_code: int = 0
    step_outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    stderr: str = ""
    ran: list[str] = field(default_factory=list)


def parse_outputs(text: str) -> dict[str, str]:
    """`name<<DELIM\\nvalue\\nDELIM` entries and `name=value` lines, as the runner reads them."""
    found = {match.group(1): match.group(3) for match in OUTPUT_ENTRY.finditer(text)}
    for line in OUTPUT_ENTRY.sub("", text).splitlines():
        name, equals, value = line.partition("=")
        if equals and name.strip():
            found[name.strip()] = value
    return found


def run_action(
    action_dir: Path,
    inputs: dict[str, str],
    environment: dict[str, str],
    *,
    workspace: Path,
    runner_temp: Path,
    skip: tuple[str, ...] = (),
) -> ActionRun:
    """Run the action in `action_dir` with `inputs` in `workspace` (GITHUB_WORKSPACE)."""
    action = yaml.safe_load((action_dir / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    unknown = set(inputs) - set(values)
    assert not unknown, f"inputs the action does not declare: {unknown}"
    values.update(inputs)
    run = ActionRun()
    summary = runner_temp / "step_summary.md"
    runner_temp.mkdir(parents=True, exist_ok=True)
    summary.write_text("")
    context: dict[str, Any] = {
        "inputs": values,
        "github": {"action_path": str(action_dir), "workspace": str(workspace)},
        "runner": {"os": "Linux", "temp": str(runner_temp)},
        "steps": {},
    }

    def expand(text: str) -> str:
        return EXPRESSION.sub(lambda match: _evaluate(match.group(1), context), str(text))

    for number, step in enumerate(action["runs"]["steps"]):
        name = step.get("name", step.get("uses", f"step {number}"))
        if "uses" in step or name in skip:
            continue
        condition = step.get("if")
        if condition and condition != "always()" and run.exit_code:
            continue
        if condition and condition not in ("always()", "runner.os == 'Linux'"):
            raise AssertionError(f"the stand-in runner cannot evaluate `if: {condition}`")
        output = runner_temp / f"output_{number}"
        output.write_text("")
        env = {
            **environment,
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_ACTION_PATH": str(action_dir),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(runner_temp),
            **{key: expand(value) for key, value in (step.get("env") or {}).items()},
        }
        script = expand(step["run"])
        completed = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        run.ran.append(name)
        run.stderr += completed.stderr
        if step.get("id"):
            outputs = parse_outputs(output.read_text())
            run.step_outputs[step["id"]] = outputs
            context["steps"][step["id"]] = {"outputs": outputs}
        if completed.returncode and not run.exit_code:
            run.exit_code = completed.returncode
    run.outputs = {name: expand(spec["value"]) for name, spec in action["outputs"].items()}
    run.summary = summary.read_text()
    return run


def _evaluate(expression: str, context: dict[str, Any]) -> str:
    """`a.b.c` looked up in `context` ('' when absent, as the runner does)."""
    value: Any = context
    for part in expression.split("."):
        value = value.get(part, "") if isinstance(value, dict) else ""
    return str(value)


def runner_environment(python_dir: Path, **github: str) -> dict[str, str]:
    """The process environment with `python` found in `python_dir` first and `GITHUB_*`."""
    environment = dict(os.environ)
    environment["PATH"] = f"{python_dir}{os.pathsep}{environment.get('PATH', '')}"
    environment.update(github)
    return environment
