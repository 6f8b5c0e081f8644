"""Check the install path a user takes (`uv tool install .`, `pipx install .`): build Forge's
wheel, install it into a fresh virtual environment, and run the installed `forge` command —
`forge --version`, then `forge run` against the loopback OpenAI-compatible server.

The development venv installs Forge editable, which hides a file missing from the wheel
(a `.tcss`, package data) or a dependency pyproject.toml forgot; this check does not. The
wheel's dependencies are resolved by pip from its metadata (pip's cache makes a repeated run
take about 20 s). Run from the repository root with the dev venv's Python (`.ci/run` does):

    .venv/bin/python scripts/check_wheel_install.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANSWER = "The installed wheel answers."


def step(text: str) -> None:
    """Say what the check does next (CI logs show where a failure happened)."""
    print(f"check_wheel_install: {text}", flush=True)


def run(command: list[str], **options: object) -> subprocess.CompletedProcess[str]:
    """Run `command`; a failure ends the check with its output."""
    done = subprocess.run(command, capture_output=True, text=True, **options)  # type: ignore[call-overload]
    if done.returncode != 0:
        sys.exit(
            f"check_wheel_install: {' '.join(command)} exited {done.returncode}\n"
            f"{done.stdout}\n{done.stderr}"
        )
    return done


def build_wheel(destination: Path) -> Path:
    """Forge's wheel, built as pip builds it for `pipx install .` (isolated build)."""
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "-w",
            str(destination),
            str(ROOT),
        ]
    )
    (wheel,) = destination.glob("forge_agent-*.whl")
    return wheel


def install(wheel: Path, environment: Path) -> Path:
    """A fresh venv with the wheel and its declared dependencies; its `bin` directory."""
    venv.create(environment, with_pip=False)  # ensurepip takes seconds: this pip installs
    bin_dir = environment / "bin"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(bin_dir / "python"),
            "install",
            "--quiet",
            str(wheel),
        ]
    )
    return bin_dir


def user_environment(home: Path, base_url: str) -> dict[str, str]:
    """A clean user's environment: their own XDG directories, the loopback server as the
    provider, nothing of the developer's (no FORGE_*/OPENAI_* variables, no PYTHONPATH)."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("FORGE_", "OPENAI_", "PYTHON", "VIRTUAL_ENV"))
    }
    for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        path = home / variable.lower()
        path.mkdir(parents=True, exist_ok=True)
        environment[variable] = str(path)
    environment.update(
        HOME=str(home),
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY="sk-wheel-check-not-a-real-key",
        FORGE_LLM__MODEL="loopback-model",
    )
    return environment


def check_installed(bin_dir: Path, home: Path) -> None:
    """`forge --version` and a headless `forge run` of the installed command, run from a
    directory outside the checkout (so the checkout cannot shadow the installed package)."""
    sys.path.insert(0, str(ROOT))
    from tests.support.openai_server import OpenAIServer, Text

    workspace = home / "project"
    workspace.mkdir(parents=True)
    server = OpenAIServer().start()
    try:
        server.enqueue(Text(ANSWER))
        environment = user_environment(home, server.base_url)
        where = run(
            [str(bin_dir / "python"), "-c", "import forge; print(forge.__file__)"],
            cwd=workspace,
            env=environment,
        ).stdout.strip()
        if not Path(where).is_relative_to(bin_dir.parent):
            sys.exit(f"check_wheel_install: forge was imported from {where}, not the new venv")
        installed = Path(where).parent
        missing = [
            str(path.relative_to(ROOT))
            for path in sorted((ROOT / "forge").rglob("*.tcss"))
            if not (installed / path.relative_to(ROOT / "forge")).is_file()
        ]
        if missing:
            sys.exit(f"check_wheel_install: the wheel lacks the TUI's styles: {missing}")
        version = run([str(bin_dir / "forge"), "--version"], cwd=workspace, env=environment)
        step(f"forge --version: {version.stdout.strip()}")
        answer = run(
            [str(bin_dir / "forge"), "run", "--max-turns", "2", "say hello"],
            cwd=workspace,
            env=environment,
            timeout=120,
        )
        if ANSWER not in answer.stdout:
            sys.exit(f"check_wheel_install: forge run printed {answer.stdout!r}, not the answer")
        if len(server.requests) != 1:
            sys.exit(f"check_wheel_install: {len(server.requests)} requests, expected 1")
        step("forge run answered from the loopback server")
    finally:
        server.stop()


def check_editable_install_is_quiet(environment: Path) -> None:
    """The editable install `make run` and `make test` do prints no setuptools warning box
    (pyproject.toml maps the flat layout with `package-dir`; without it setuptools installs an
    import finder and says "BuildBackendWarning: Editable installation")."""
    venv.create(environment, with_pip=False)
    python = str(environment / "bin" / "python")
    done = run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-e", str(ROOT)]
    )
    output = done.stdout + done.stderr
    if "Warning" in output.replace("WARNING: Location", ""):
        sys.exit(f"check_wheel_install: the editable install warns:\n{output}")


def main() -> None:
    """Build, install, run; exit non-zero with the reason on the first failure."""
    with tempfile.TemporaryDirectory(prefix="forge-wheel-") as temporary:
        scratch = Path(temporary)
        step("building the wheel")
        wheel = build_wheel(scratch / "dist")
        step(f"installing {wheel.name} into a fresh venv")
        bin_dir = install(wheel, scratch / "venv")
        check_installed(bin_dir, scratch / "home")
        step("an editable install (make run's) prints no packaging warning")
        check_editable_install_is_quiet(scratch / "editable")
    step("ok")


if __name__ == "__main__":
    main()
