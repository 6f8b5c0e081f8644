"""Toad (an ACP client in Textual, `batrachian-toad` on PyPI) against `forge acp`, in tmux.

Installs Toad into `.toad-venv` (git-ignored; needs PyPI, so this is not part of `make
test`), starts the loopback OpenAI-compatible server with a scripted three-turn task, runs
`toad acp "python -m forge acp" WORKSPACE` in a tmux session with isolated XDG directories,
and drives it with keys: turn 1 asks Forge to create a file (Forge asks for approval; Toad
asks inline and the script presses `a`, "Allow once"), turn 2 asks what the file says (a
read, no approval), turn 3 changes the file (Toad's full-screen permissions view with the
diff; `a` again), then `/help` (its lines kept apart on screen). It checks the screen (`tmux
capture-pane`) and the file, prints the Toad version, the screens at both approvals and at
the end, and PASS, or FAIL with the screen and the reason. TOAD_CHECK_TRACE=DIR records the
ACP traffic both ways in DIR.

Toad 0.5 and later require Python >= 3.14: set TOAD_PYTHON to such an interpreter when
`python3.14` is not on PATH. On Debian 12 (Python 3.11), `sudo
scripts/toad_python314_root.sh` builds one from Debian's archive and
`TOAD_PYTHON=scripts/toad_python314` runs it. Run: `.venv/bin/python
scripts/toad_acp_check.py`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls  # noqa: E402

VENV = REPO_ROOT / ".toad-venv"
SESSION = f"forge-toad-check-{os.getpid()}"
WAIT = 60.0
FIRST_ANSWER = "Created hello.txt for you."
SECOND_ANSWER = "The file says: hello from forge"
THIRD_ANSWER = "Changed hello.txt to goodbye."
HELP_LINE = "/cost — Show the session's cost per model"
SCREENS: dict[str, str] = {}  # the screen at the approval and at the end, printed by main


class CheckFailed(Exception):
    """The check failed; the message says at which step."""


def toad_python() -> str:
    """An interpreter new enough for Toad (>= 3.14)."""
    candidates = [os.environ.get("TOAD_PYTHON", "")] + [
        shutil.which(f"python3.{minor}") or "" for minor in (14, 15, 16)
    ]
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info >= (3, 14))"],
            capture_output=True,
            text=True,
        )
        if probe.stdout.strip() == "True":
            return candidate
    raise CheckFailed(
        "Toad (batrachian-toad >= 0.5) requires Python >= 3.14 and none was found "
        f"(this machine has {sys.version.split()[0]}); set TOAD_PYTHON to a 3.14 interpreter"
    )


def make_venv(python: str) -> None:
    """`.toad-venv` made by `python`, with pip.

    When `python` is scripts/toad_python314 (a Python 3.14 from a Debian root, run through
    that root's loader), the venv's own interpreter link points at the root's binary, which
    cannot start on the host's libraries: it is pointed at the wrapper instead. pip comes
    from the interpreter's own `share/python-wheels` when it has one (Debian's; its
    `ensurepip` would look in the host's /usr/share/python-wheels), else from `ensurepip`.
    """
    subprocess.run([python, "-m", "venv", "--without-pip", str(VENV)], check=True)
    venv_python = str(VENV / "bin" / "python")
    if subprocess.run([venv_python, "-c", "pass"], capture_output=True).returncode != 0:
        for entry in (VENV / "bin").iterdir():
            if entry.is_symlink() and os.path.isabs(os.readlink(entry)):
                entry.unlink()
                entry.symlink_to(Path(python).resolve())
    base_prefix = subprocess.run(
        [venv_python, "-c", "import sys; print(sys.base_prefix)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    wheels = sorted(Path(base_prefix, "share", "python-wheels").glob("pip-*.whl"))
    if wheels:
        wheel = str(wheels[-1])
        subprocess.run(
            [venv_python, f"{wheel}/pip", "install", "-q", "--no-index", wheel], check=True
        )
    else:
        subprocess.run([venv_python, "-m", "ensurepip"], check=True)


def install_toad() -> tuple[Path, str]:
    """`.toad-venv` with batrachian-toad; the `toad` program and its version."""
    if not (VENV / "bin" / "toad").exists():
        make_venv(toad_python())
        subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", "batrachian-toad"], check=True)
    shown = subprocess.run(
        [str(VENV / "bin" / "pip"), "show", "batrachian-toad"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    version = next(
        line.split(":", 1)[1].strip() for line in shown.splitlines() if line.startswith("Version:")
    )
    return VENV / "bin" / "toad", version


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False).stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", SESSION)


def wait_for(what: str, check: object, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(check) and check():
            return
        time.sleep(0.5)
    raise CheckFailed(f"timed out waiting for {what}")


def on_screen(text: str) -> bool:
    return text in " ".join(screen().split())


def type_line(text: str) -> None:
    tmux("send-keys", "-t", SESSION, "-l", text)
    time.sleep(0.3)
    tmux("send-keys", "-t", SESSION, "Enter")


def run_check(toad: Path, server: OpenAIServer, root: Path) -> None:
    workspace = root / "workspace"
    workspace.mkdir()
    environment = {
        "HOME": str(root / "home"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_CACHE_HOME": str(root / "cache"),
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-toad-check-0123456789",
        "FORGE_LLM__MAX_RETRIES": "0",
        "PYTHONPATH": str(REPO_ROOT),
        "TERM": "xterm-256color",
    }
    forge = f"{shlex.quote(sys.executable)} -m forge acp"
    if trace := os.environ.get("TOAD_CHECK_TRACE"):  # a folder: the ACP traffic, both ways
        Path(trace).mkdir(parents=True, exist_ok=True)
        into, out = (shlex.quote(str(Path(trace, name))) for name in ("to-forge", "from-forge"))
        forge = f"sh -c {shlex.quote(f'tee {into} | {forge} | tee {out}')}"
    command = shlex.join(
        [
            "env",
            *(f"{k}={v}" for k, v in environment.items()),
            str(toad),
            "acp",
            forge,
            str(workspace),
        ]
    )
    tmux("new-session", "-d", "-s", SESSION, "-x", "160", "-y", "48", command)
    # Toad starts and connects to forge acp; its status line names the session's mode once
    # the session is open (typed earlier, the prompt can stay unsent on a loaded machine).
    wait_for("the session", lambda: screen().rstrip().splitlines()[-3:] and on_screen("Ask"))
    time.sleep(2)
    type_line("Create hello.txt saying hello from forge")
    wait_for(
        "the approval request", lambda: on_screen("Approval request") or on_screen("Allow once")
    )
    # A new file's diff has an empty oldText (issue 44): Toad shows it as one added line.
    wait_for("the new file's diff in the approval", lambda: on_screen("hello.txt (+1, -0)"))
    time.sleep(1)  # the approval screen drawn in full
    SCREENS["approval"] = screen()
    tmux("send-keys", "-t", SESSION, "a")  # Toad's "Allow once"
    wait_for("the first answer", lambda: on_screen(FIRST_ANSWER))
    if (workspace / "hello.txt").read_text() != "hello from forge\n":
        raise CheckFailed("hello.txt was not written as asked")
    type_line("What does hello.txt say?")
    wait_for("the second answer", lambda: on_screen(SECOND_ANSWER))
    # Turn 3 overwrites the file: the request's diff, old and new, in Toad's full-screen
    # permissions view (as the new file's above).
    type_line("Change hello.txt to say goodbye")
    wait_for(
        "the edit's approval request",
        lambda: on_screen("Allow once") and on_screen("goodbye from forge"),
    )
    time.sleep(1)
    SCREENS["edit approval"] = screen()
    tmux("send-keys", "-t", SESSION, "a")
    wait_for("the third answer", lambda: on_screen(THIRD_ANSWER))
    if (workspace / "hello.txt").read_text() != "goodbye from forge\n":
        raise CheckFailed("hello.txt was not changed as asked")
    # A command's answer keeps its lines (Toad renders messages as Markdown).
    # As a user does: "/" opens Toad's command menu (the agent's commands and Toad's own),
    # "help" narrows it, Enter inserts the command into the prompt, Enter sends it.
    tmux("send-keys", "-t", SESSION, "-l", "/")
    wait_for("Toad's command menu", lambda: on_screen("fuzzy search"))
    tmux("send-keys", "-t", SESSION, "-l", "help")
    time.sleep(1)
    tmux("send-keys", "-t", SESSION, "Enter")
    wait_for("the menu to close", lambda: not on_screen("fuzzy search"))
    time.sleep(0.5)
    tmux("send-keys", "-t", SESSION, "Enter")
    wait_for("the /help answer", lambda: on_screen(HELP_LINE))
    time.sleep(1)  # let the turn's last updates settle on screen
    SCREENS["end"] = screen()
    if not any(line.strip(" ▌▎▊").strip() == HELP_LINE for line in SCREENS["end"].splitlines()):
        raise CheckFailed("/help's lines ran together")
    if server.pending:
        raise CheckFailed(f"{server.pending} scripted replies were not asked for")


def main() -> int:
    try:
        toad, version = install_toad()
    except (CheckFailed, subprocess.CalledProcessError) as error:
        print(f"FAIL (Toad not installed): {error}")
        return 1
    print(f"Toad (batrachian-toad) {version}")
    server = OpenAIServer().start()
    server.enqueue(
        ToolCalls([Call("write_file", {"path": "hello.txt", "content": "hello from forge\n"})]),
        Text(FIRST_ANSWER),
        ToolCalls([Call("read_file", {"path": "hello.txt"})]),
        Text(SECOND_ANSWER),
        ToolCalls([Call("write_file", {"path": "hello.txt", "content": "goodbye from forge\n"})]),
        Text(THIRD_ANSWER),
    )
    root = Path(tempfile.mkdtemp(prefix="forge-toad-check-"))
    try:
        run_check(toad, server, root)
    except (CheckFailed, OSError) as error:
        print(f"FAIL: {error}\n--- screen ---\n{screen()}")
        return 1
    finally:
        tmux("kill-session", "-t", SESSION)
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    for moment, text in SCREENS.items():
        print(f"--- screen at the {moment} ---\n{text.rstrip()}")
    print(
        "PASS: three turns, two approvals, the file written, read back and changed, and /help, "
        "through Toad"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
