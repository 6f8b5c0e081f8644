"""The sandbox of one session's model commands: what `execute_command` asks before it runs.

`CommandSandbox` is built from `tools.sandbox` and `tools.hide_env` when the session starts.
Its `state` says whether commands are confined, by what and with which network, and why not
(`/sandbox`, `forge sandbox --check`, the status pane, `forge run`'s first record). `prepare`
turns a command into what to run: with bubblewrap, `bwrap … -- /bin/sh -c COMMAND` in a new
PID namespace (when the shell ends, the kernel ends everything the command started, `setsid`
and double forks included), joined to the session's network namespace and pids cgroup in the
child between fork and exec. The namespace holder, the cgroup and the private /tmp are created
at the first confined command and removed by `close`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from forge.agent.sandbox.environment import model_command_environment
from forge.agent.sandbox.mounts import Placeholders, plan_mounts, secret_paths
from forge.agent.sandbox.namespaces import SessionNetwork
from forge.agent.sandbox.pids import SessionPids
from forge.agent.sandbox.probe import BUBBLEWRAP, NO_MECHANISM, Mechanism, find_mechanism
from forge.agent.sandbox.state import SandboxState
from forge.config.ephemeral import is_ephemeral
from forge.config.paths import cache_dir, config_path, data_dir, state_dir
from forge.config.settings import SandboxSettings, Settings

SESSION_TMP_PREFIX = "forge-sandbox-tmp-"
"""The session /tmp's folder on the host: `forge-sandbox-tmp-PID-random`."""
UNCONFINED_HINT = (
    "[this command ran in Forge's sandbox: it may write only in the workspace and /tmp, "
    "cannot read secrets such as ~/.ssh{network}. If it failed because it needs more, call "
    "execute_command again with unconfined: true and a reason; the user decides.]"
)


@dataclass
class PreparedCommand:
    """How to start one command: `argv`, its environment, what the child does before exec,
    and what to undo when it has ended (`finish`)."""

    argv: list[str]
    environment: dict[str, str]
    before_exec: Callable[[], None] | None = None
    confined: bool = False
    placeholders: tuple[Path, ...] = ()
    _release: Callable[[Iterable[Path]], None] | None = field(default=None, repr=False)

    def finish(self) -> None:
        """The command ended: remove the placeholders it no longer shares."""
        if self._release is not None:
            self._release(self.placeholders)
            self._release = None


class SandboxRefusedError(Exception):
    """A command cannot run: `tools.sandbox.mode` is on and nothing confines it."""


class CommandSandbox:
    """The confinement of one session's model commands (see the module docstring)."""

    def __init__(
        self,
        settings: SandboxSettings,
        workspace: Path,
        *,
        hide_env: Sequence[str] = (),
        readable: Callable[[], Sequence[Path]] | None = None,
        program: str = "bwrap",
    ) -> None:
        """`readable`: the loaded skills' folders (read-only even inside hidden paths);
        `program`: the bubblewrap executable (a test names one that does not exist)."""
        self.settings = settings
        self.workspace = workspace
        self.hide_env = tuple(hide_env)
        self.readable = readable
        self._lock = threading.Lock()
        self._placeholders = Placeholders()
        self._session_tmp: Path | None = None
        self._program = program
        # The trial run of bubblewrap (tens of ms) overlaps the rest of the session's start.
        self._probe = threading.Thread(target=find_mechanism, args=(program,), daemon=True)
        if settings.mode != "off":
            self._probe.start()
        self._network: SessionNetwork | None = None
        self.pids = SessionPids(settings.max_processes)

    @property
    def mechanism(self) -> Mechanism:
        """What confines the commands (found once per process; "none" with why)."""
        if self.settings.mode == "off":
            return Mechanism(NO_MECHANISM, problem="tools.sandbox.mode is off")
        self._probe.join()
        return find_mechanism(self._program)

    @property
    def network(self) -> SessionNetwork:
        """The session's network namespace (made at the first confined command)."""
        if self._network is None:
            self._network = SessionNetwork(self.mechanism.path)
        return self._network

    @property
    def enabled(self) -> bool:
        """Whether commands run confined."""
        return self.mechanism.name == BUBBLEWRAP

    @property
    def allow_unconfined(self) -> bool:
        """Whether the model may ask to run a command outside the sandbox in auto mode."""
        return self.settings.allow_unconfined

    @property
    def unconfined_refused(self) -> str:
        """Why an unconfined run is never allowed ("" when the user may allow one)."""
        if self.enabled and self.settings.mode == "on":
            return "tools.sandbox.mode is on: commands never run outside the sandbox"
        return ""

    @property
    def auto_allow(self) -> bool:
        """Whether confined commands run without a dialog in ask mode."""
        return self.enabled and self.settings.auto_allow

    def state(self) -> SandboxState:
        """What the sandbox does now (after the first command, also its process bound)."""
        mode = self.settings.mode
        if not self.enabled:
            return SandboxState(
                enabled=False,
                mechanism=NO_MECHANISM,
                network=True,
                mode=mode,
                reason=self.mechanism.problem,
                refuses=mode == "on",
            )
        network = self.settings.network
        details = [
            f"writable: the workspace ({self.workspace}) and a private /tmp of the session",
            "read-only: the rest of the file system; in the workspace .forge/, .agents/, "
            ".claude/, AGENTS.md, .git/hooks and .git/config",
            "unreadable: ~/.ssh, ~/.aws, ~/.gnupg, ~/.config/gh, ~/.netrc and other credential "
            "files, Forge's config, data, state and cache folders (loaded skills stay readable)"
            + (f", and {', '.join(self.settings.deny_read)}" if self.settings.deny_read else ""),
            "network: the host's"
            if network
            else "network: none (one private loopback shared by the session's commands)"
            + (f"; {self.network.problem}" if self.network.problem else ""),
            "processes: ended with the command (PID namespace); "
            + (self.pids.description if self.pids.directory or self.pids.problem else
               f"at most {self.settings.max_processes} at once (a pids cgroup, at the first "
               "command)"),
            "environment: no provider keys, no FORGE_* settings"
            + (f", none of {', '.join(self.hide_env)}" if self.hide_env else ""),
        ]  # fmt: skip
        return SandboxState(True, BUBBLEWRAP, network, mode, details=tuple(details))

    def environment(self) -> dict[str, str]:
        """The environment of a model command, confined or not."""
        return model_command_environment(self.hide_env)

    def prepare(
        self, command: str, workspace: Path, *, unconfined: bool = False
    ) -> PreparedCommand:
        """What to run for the model's `command` in `workspace` (its real path).
        `unconfined`: the user allowed this one to run outside the sandbox.
        `SandboxRefusedError` when mode `on` has no mechanism."""
        environment = self.environment()
        shell = ["/bin/sh", "-c", command]
        if unconfined or not self.enabled:
            if not unconfined and self.settings.mode == "on":
                raise SandboxRefusedError(
                    "tools.sandbox.mode is on, but no sandbox can run here: "
                    f"{self.mechanism.problem}. The command did not run."
                )
            return PreparedCommand(shell, environment)
        session_tmp = self._start()
        plan = plan_mounts(
            workspace,
            session_tmp,
            secret_paths(Path.home(), _forge_paths(), self.settings.deny_read),
            list(self.readable()) if self.readable is not None else [],
        )
        argv = [
            self.mechanism.path,
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-ipc",
            *(() if self.settings.network or self.network.ready else ("--unshare-net",)),
            *plan.arguments,
            "--chdir", str(workspace),
            "--", *shell,
        ]  # fmt: skip
        self._placeholders.acquire(plan.placeholders)
        return PreparedCommand(
            argv,
            environment,
            before_exec=self._before_exec,
            confined=True,
            placeholders=plan.placeholders,
            _release=self._placeholders.release,
        )

    def failure_hint(self) -> str:
        """What a failed confined command's result says to the model."""
        network = "" if self.settings.network else " and has no network"
        return UNCONFINED_HINT.format(network=network)

    def close(self) -> None:
        """End the session's namespace holder, cgroup and /tmp."""
        with self._lock:
            if self._network is not None:
                self._network.close()
            self.pids.close()
            session_tmp, self._session_tmp = self._session_tmp, None
        if session_tmp is not None:
            shutil.rmtree(session_tmp, ignore_errors=True)

    @property
    def started(self) -> bool:
        """Whether the session's /tmp, namespace and cgroup exist (the first command made them)."""
        return self._session_tmp is not None

    def start(self) -> None:
        """Make them now, if confined (blocking: call it off the event loop)."""
        if self.enabled:
            self._start()

    def _start(self) -> Path:
        """The session's /tmp, namespace and cgroup, created at the first confined command."""
        with self._lock:
            if self._session_tmp is None:
                parent = _session_tmp_parent()
                remove_stale_temporaries(parent)
                self._session_tmp = Path(
                    tempfile.mkdtemp(prefix=f"{SESSION_TMP_PREFIX}{os.getpid()}-", dir=parent)
                )
                if not self.settings.network:
                    self.network.start()
                self.pids.start()
            return self._session_tmp

    def _before_exec(self) -> None:
        self.pids.move_self()
        if not self.settings.network:
            self.network.enter()


def remove_stale_temporaries(folder: Path) -> None:
    """Remove the session /tmp folders of Forge processes that are gone (killed with -9:
    nothing closed their sandbox)."""
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            if entry.name.startswith(SESSION_TMP_PREFIX) and not _owner_alive(entry.name):
                shutil.rmtree(entry, ignore_errors=True)


def _session_tmp_parent() -> Path:
    """Where the session's /tmp lives on the host: the temp folder, or, for `forge run
    --ephemeral` (which writes nothing of its own), memory (/dev/shm) where there is one."""
    shared_memory = Path("/dev/shm")
    if is_ephemeral() and os.access(shared_memory, os.W_OK | os.X_OK):
        return shared_memory
    return Path(tempfile.gettempdir())


def _owner_alive(name: str) -> bool:
    """Whether the process whose id the folder name holds (after its prefix) still runs; a
    name without one is kept."""
    pid = name.removeprefix(SESSION_TMP_PREFIX).split("-", 1)[0]
    if not pid.isdigit():
        return True
    return Path(f"/proc/{pid}").exists()


def command_sandbox(
    settings: Settings, workspace: Path, readable: Callable[[], Sequence[Path]] | None = None
) -> CommandSandbox:
    """The sandbox `settings.tools` describe for a session in `workspace`."""
    return CommandSandbox(
        settings.tools.sandbox, workspace, hide_env=settings.tools.hide_env, readable=readable
    )


def confined_server_command(
    command: str, args: Sequence[str], workspace: Path, settings: SandboxSettings
) -> tuple[str, list[str]]:
    """An MCP stdio server's command and arguments run inside bubblewrap (`sandbox: true` in
    its entry): the workspace writable, secrets hidden, an empty /tmp of its own, its own
    network namespace unless `tools.sandbox.network`, ended with Forge. `SandboxRefusedError`
    when no sandbox can run here."""
    mechanism = find_mechanism()
    if mechanism.name != BUBBLEWRAP:
        raise SandboxRefusedError(
            f"sandbox: true, but no sandbox can run here: {mechanism.problem}"
        )
    root = workspace.resolve()
    plan = plan_mounts(
        root,
        None,
        secret_paths(Path.home(), _forge_paths(), settings.deny_read),
        [],
        placeholders_allowed=False,
    )
    arguments = [
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        *(() if settings.network else ("--unshare-net",)),
        *plan.arguments,
        "--chdir", str(root),
        "--", command, *args,
    ]  # fmt: skip
    return mechanism.path, arguments


def _forge_paths() -> list[Path]:
    """Forge's own files and folders: its config (file and folder), data, state and cache."""
    config = config_path()
    paths = [config, data_dir(), state_dir(), cache_dir()]
    if config.parent.name == "forge":
        paths.append(config.parent)
    return paths


def close_quietly(sandbox: CommandSandbox | None) -> None:
    """`close`, never raising (a session's end)."""
    if sandbox is not None:
        with contextlib.suppress(OSError):
            sandbox.close()
