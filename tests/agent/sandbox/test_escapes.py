# ruff: noqa: ASYNC220, ASYNC221, ASYNC240
"""The escape suite (issue 39): each a real command through the real `execute_command`, in a
real bubblewrap sandbox — writing outside, reading secrets, the key from the environment and
from /proc, the host's loopback, Forge's own config and git hooks, survivors, symlinks and a
process burst — all refused or contained, nothing lost in the workspace; and ordinary work
(git, python, make, writing files) still runs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from forge.config.paths import config_path, data_dir, state_dir
from tests.agent.sandbox.support import (
    make_sandbox,
    needs_bubblewrap,
    processes_with,
    run_model_command,
    visible_home,
)

pytestmark = needs_bubblewrap
__all__ = ["visible_home"]  # the fixture, used by name

KEY = "sk-sandbox-canary-5e1f0c2b9a"


@pytest.fixture
def host_server() -> Iterator[int]:
    """A TCP server on the host's 127.0.0.1; yields its port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    yield server.getsockname()[1]
    server.close()


async def test_writing_outside_the_workspace_is_refused(
    workspace: Path, visible_home: Path
) -> None:
    bashrc = visible_home / ".bashrc"
    bashrc.write_text("original\n")
    sandbox = make_sandbox(workspace)
    try:
        result = await run_model_command(
            sandbox,
            workspace,
            f"echo evil >> '{bashrc}'; mkdir -p '{visible_home}/.ssh'; "
            f"echo key > '{visible_home}/.ssh/authorized_keys'; touch /usr/forge-escape; "
            "echo kept > inside.txt",
        )
    finally:
        sandbox.close()
    assert "Read-only file system" in result.content
    assert bashrc.read_text() == "original\n"
    assert not (visible_home / ".ssh").exists()
    assert not Path("/usr/forge-escape").exists()
    assert (workspace / "inside.txt").read_text() == "kept\n"


async def test_each_secret_path_is_unreadable_and_the_rest_of_home_is_not(
    workspace: Path, visible_home: Path
) -> None:
    secrets = [
        visible_home / ".ssh" / "id_ed25519",
        visible_home / ".aws" / "credentials",
        visible_home / ".gnupg" / "private-keys-v1.d" / "key",
        visible_home / ".config" / "gh" / "hosts.yml",
        visible_home / ".netrc",
        config_path(),
        data_dir() / "sessions" / "session.jsonl",
        state_dir() / "trust.json",
        visible_home / ".cache" / "forge" / "cached",
        visible_home / "private" / "notes.txt",  # tools.sandbox.deny_read
    ]
    for path in secrets:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{KEY}\n")
    skill = config_path().parent / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("skill body\n")
    (visible_home / "readme.txt").write_text("visible\n")
    sandbox = make_sandbox(workspace, readable=[skill], deny_read=["~/private"])
    try:
        reads = "; ".join(f"cat '{path}'" for path in secrets)
        result = await run_model_command(
            sandbox,
            workspace,
            f"{reads}; cat '{skill}/SKILL.md' '{visible_home}/readme.txt'; "
            f"grep -r sk-sandbox '{visible_home}' 2>&1 | head -3",
        )
    finally:
        sandbox.close()
    assert KEY not in result.content
    assert "skill body" in result.content  # a loaded skill's folder stays readable
    assert "visible" in result.content  # the home folder itself is there, read-only


async def test_provider_keys_are_absent_from_the_environment_and_from_proc(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "FORGE_LLM__API_KEY", "MY_TOKEN"):
        monkeypatch.setenv(name, f"{KEY}-{name}")
    monkeypatch.setenv("FORGE_LLM__SUMMARIZATION_API_KEY", f"{KEY}-summary")
    monkeypatch.setenv("KEPT_VARIABLE", "kept-value")
    sandbox = make_sandbox(workspace, hide_env=["MY_*"])
    try:
        result = await run_model_command(
            sandbox,
            workspace,
            "env; cat /proc/$PPID/environ; cat /proc/1/environ; "
            "for f in /proc/[0-9]*/environ; do cat $f; done; echo; echo ppid=$PPID",
        )
    finally:
        sandbox.close()
    assert "kept-value" in result.content
    assert KEY not in result.content
    assert "ppid=" in result.content


async def test_the_hosts_loopback_is_unreachable_and_the_session_shares_one_namespace(
    workspace: Path, host_server: int
) -> None:
    connect = (
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', "
        f"{host_server}), timeout=3); print('connected')\""
    )
    host_namespace = Path("/proc/self/ns/net").readlink()
    sandbox = make_sandbox(workspace)
    try:
        refused = await run_model_command(sandbox, workspace, connect)
        first = await run_model_command(sandbox, workspace, "readlink /proc/self/ns/net")
        second = await run_model_command(sandbox, workspace, "readlink /proc/self/ns/net")
    finally:
        sandbox.close()
    assert "connected" not in refused.content
    assert refused.is_error
    assert "unconfined: true" in refused.content  # the model reads how to ask for more
    namespace = first.content.splitlines()[0]
    assert namespace == second.content.splitlines()[0]
    assert namespace != str(host_namespace)

    open_sandbox = make_sandbox(workspace, network=True)
    try:
        allowed = await run_model_command(open_sandbox, workspace, connect)
    finally:
        open_sandbox.close()
    assert "connected" in allowed.content


async def test_a_server_on_the_session_loopback_is_reachable_within_a_command(
    workspace: Path,
) -> None:
    server = (
        "python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1', 47811)); "
        "s.listen(); c,_=s.accept(); c.send(b'pong')\" & sleep 0.5; "
        "python3 -c \"import socket; print(socket.create_connection(('127.0.0.1', 47811))"
        '.recv(4).decode())"'
    )
    sandbox = make_sandbox(workspace)
    try:
        result = await run_model_command(sandbox, workspace, server)
    finally:
        sandbox.close()
    assert "pong" in result.content


async def test_forge_and_git_config_in_the_workspace_are_read_only(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text("{}\n")
    git_config = (workspace / ".git" / "config").read_text()
    sandbox = make_sandbox(workspace)
    try:
        result = await run_model_command(
            sandbox,
            workspace,
            "mkdir -p .forge; echo 'mcp_servers: {}' > .forge/mcp.yaml; "
            "printf '#!/bin/sh\\nevil\\n' > .git/hooks/pre-commit; "
            "git config core.hooksPath /tmp; echo evil > AGENTS.md; "
            "echo '{\"hooks\": {}}' > .claude/settings.json; mkdir .agents/x; "
            "echo fine > src.txt",
        )
    finally:
        sandbox.close()
    assert "Read-only file system" in result.content
    assert not (workspace / ".forge").exists()  # the placeholder is gone again
    assert not (workspace / ".agents").exists()
    assert not (workspace / "AGENTS.md").exists()
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert (workspace / ".git" / "config").read_text() == git_config
    assert (workspace / ".claude" / "settings.json").read_text() == "{}\n"
    assert (workspace / "src.txt").read_text() == "fine\n"


def survivors(base: int) -> str:
    """A `setsid`, a double-forked and a `nohup` sleep of `base`, `base + 1`, `base + 2`
    seconds (each test its own numbers: tests may run in parallel)."""
    return f"setsid sleep {base} & (sleep {base + 1} &) ; nohup sleep {base + 2} >/dev/null 2>&1 &"


async def test_setsid_double_fork_and_nohup_do_not_outlive_the_command(workspace: Path) -> None:
    sandbox = make_sandbox(workspace)
    try:
        result = await run_model_command(sandbox, workspace, f"{survivors(7301)} echo started")
    finally:
        sandbox.close()
    assert "started" in result.content
    for marker in ("7301", "7302", "7303"):
        assert processes_with(marker) == []


async def test_survivors_die_at_the_timeout_and_at_an_interrupt(workspace: Path) -> None:
    sandbox = make_sandbox(workspace)
    try:
        timed_out = await run_model_command(
            sandbox, workspace, f"{survivors(7311)} sleep 7314", timeout_seconds=1
        )
        task = asyncio.ensure_future(
            run_model_command(sandbox, workspace, "setsid sleep 7305 & sleep 7306")
        )
        for _ in range(100):
            if processes_with("7306"):
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    finally:
        sandbox.close()
    assert timed_out.metadata["timed_out"] is True
    for marker in ("7311", "7312", "7313", "7314", "7305", "7306"):
        assert processes_with(marker) == []


async def test_a_symlink_to_outside_reads_no_secret_and_writes_nothing(
    workspace: Path, visible_home: Path
) -> None:
    (visible_home / ".ssh").mkdir()
    (visible_home / ".ssh" / "id_rsa").write_text(f"{KEY}\n")
    (visible_home / ".profile").write_text("original\n")
    sandbox = make_sandbox(workspace)
    try:
        result = await run_model_command(
            sandbox,
            workspace,
            f"ln -s '{visible_home}/.ssh/id_rsa' key; cat key; "
            f"ln -s '{visible_home}/.profile' profile; echo evil >> profile; ls",
        )
    finally:
        sandbox.close()
    assert KEY not in result.content
    assert (visible_home / ".profile").read_text() == "original\n"
    assert (workspace / "key").is_symlink()  # the workspace keeps what the command made


async def test_a_bounded_process_burst_stops_at_the_pids_limit(workspace: Path) -> None:
    sandbox = make_sandbox(workspace, max_processes=24)
    try:
        result = await run_model_command(
            sandbox,
            workspace,
            'python3 -c "import subprocess\n'
            "started, refused = [], 0\n"
            "for _ in range(48):\n"
            "    try: started.append(subprocess.Popen(['sleep', '7307']))\n"
            "    except OSError: refused += 1\n"
            "print('started', len(started), 'refused', refused)\"",
        )
        if sandbox.pids.directory is None:
            pytest.skip(f"no pids cgroup here: {sandbox.pids.problem}")
    finally:
        sandbox.close()
    words = result.content.split()
    started, refused = int(words[1]), int(words[3])
    assert started + refused == 48
    assert 0 < started < 24  # sh, python and bwrap's init count too
    assert refused > 0
    assert processes_with("7307") == []


async def test_ordinary_work_runs_git_python_make_and_writes(workspace: Path) -> None:
    (workspace / "Makefile").write_text("all:\n\techo built > built.txt\n")
    sandbox = make_sandbox(workspace)
    try:
        result = await run_model_command(
            sandbox,
            workspace,
            "git init -q . && git add Makefile && "
            "git -c user.name=t -c user.email=t@t commit -qm first && git log --oneline | wc -l "
            "&& python3 -c \"open('made.py','w').write('x = 1\\n')\" && make -s && "
            "mkdir -p src/pkg && echo data > src/pkg/file.txt && echo tmp > /tmp/scratch && "
            "cat /tmp/scratch",
        )
    finally:
        sandbox.close()
    assert result.exit_code == 0, result.content
    assert (workspace / "made.py").read_text() == "x = 1\n"
    assert (workspace / "built.txt").read_text() == "built\n"
    assert (workspace / "src" / "pkg" / "file.txt").read_text() == "data\n"
    log = subprocess.run(
        ["git", "log", "--oneline"], cwd=workspace, capture_output=True, text=True, check=True
    )
    assert "first" in log.stdout


async def test_the_session_tmp_is_shared_by_its_commands_and_removed_at_the_end(
    workspace: Path,
) -> None:
    sandbox = make_sandbox(workspace)
    try:
        await run_model_command(sandbox, workspace, "echo note > /tmp/note")
        result = await run_model_command(sandbox, workspace, "cat /tmp/note")
        session_tmp = sandbox._session_tmp
    finally:
        sandbox.close()
    assert result.content.startswith("note")
    assert session_tmp is not None and not session_tmp.exists()


async def test_what_a_killed_forge_left_is_removed_at_the_next_sessions_first_command(
    workspace: Path,
) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = Path(tempfile.gettempdir()) / f"forge-sandbox-tmp-{dead.pid}-abc"
    (left / "nested").mkdir(parents=True)
    live = Path(tempfile.gettempdir()) / f"forge-sandbox-tmp-{os.getpid()}-keep"
    live.mkdir()
    sandbox = make_sandbox(workspace)
    try:
        await run_model_command(sandbox, workspace, "true")
        kept = live.exists()
    finally:
        sandbox.close()
        shutil.rmtree(live, ignore_errors=True)
    assert not left.exists()
    assert kept  # a live Forge's folder stays
