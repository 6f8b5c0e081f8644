"""Saves from several processes at once: a lock around compare-and-replace, the losers told.

Real processes, a real file and the real `fcntl.flock`; no timing is asserted.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from forge.config.file_lock import lock_path_for
from forge.config.paths import config_path
from forge.config.store import content_digest

REPO_ROOT = Path(__file__).resolve().parents[2]
GENEROUS_SECONDS = 60

SAVER = textwrap.dedent(
    """
    import json, sys
    from forge.config.errors import ConfigChangedError
    from forge.config.store import content_digest, load_settings, write_settings

    name, rounds = sys.argv[1], int(sys.argv[2])
    outcomes = []
    for number in range(rounds):
        previous = load_settings()
        llm = previous.settings.llm.model_copy(update={"model": f"{name}-{number}"})
        settings = previous.settings.model_copy(update={"llm": llm})
        try:
            written = write_settings(settings, previous, {"llm.model"})
        except ConfigChangedError as error:
            outcomes.append({"base": previous.version, "won": False, "error": str(error)})
        else:
            outcomes.append(
                {"base": previous.version, "won": True, "written": content_digest(written)}
            )
    print(json.dumps(outcomes))
    """
)


def _start_saver(name: str, rounds: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SAVER, name, str(rounds)],
        cwd=REPO_ROOT,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_four_processes_saving_at_once_win_one_at_a_time() -> None:
    """Exactly one save wins per base version; every loser hears the file changed."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# shared by four savers\nui:\n  theme: nord\n")
    initial = content_digest(path.read_bytes())
    savers = [_start_saver(f"p{number}", 25) for number in range(4)]
    outcomes: list[dict[str, object]] = []
    for saver in savers:
        stdout, stderr = saver.communicate(timeout=GENEROUS_SECONDS * 4)
        assert saver.returncode == 0, stderr
        outcomes.extend(json.loads(stdout))
    wins = [outcome for outcome in outcomes if outcome["won"]]
    losses = [outcome for outcome in outcomes if not outcome["won"]]
    # One winner per base version: no two successful saves started from the same file.
    bases = [win["base"] for win in wins]
    assert len(bases) == len(set(bases)), "two saves over one version both reported success"
    # The winners form one chain from the initial file to the file on disk: no save is lost.
    next_of = {win["base"]: win["written"] for win in wins}
    digest, chain = initial, 0
    while digest in next_of:
        digest, chain = next_of[digest], chain + 1
    assert chain == len(wins)
    assert digest == content_digest(path.read_bytes())
    assert all("changed on disk" in str(loss["error"]) for loss in losses)
    data = yaml.safe_load(path.read_text())
    assert data["ui"] == {"theme": "nord"}
    assert data["llm"]["model"].startswith("p")
    assert path.read_text().startswith("# shared by four savers\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def _holds_open(pid: int, target: Path) -> bool:
    try:
        descriptors = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for descriptor in descriptors:
        try:
            if Path(os.readlink(descriptor)) == target:
                return True
        except OSError:
            continue
    return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc")
def test_a_save_waits_for_the_lock_and_then_sees_the_change_made_meanwhile() -> None:
    """While another process holds the lock, a save waits; it then finds the file changed.

    Without the lock the saver would write at once over the version it loaded.
    """
    import fcntl

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("ui:\n  theme: nord\n")
    lock = lock_path_for(path)
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    saver = _start_saver("waiting", 1)
    try:
        deadline = time.monotonic() + GENEROUS_SECONDS
        while not _holds_open(saver.pid, lock):
            assert saver.poll() is None, f"saved without taking the lock: {saver.stdout}"
            if time.monotonic() >= deadline:  # a polling deadline, not a timing assertion
                pytest.fail("the saver never reached the lock")
            time.sleep(0.01)
        # The saver loaded and is waiting: another program saves meanwhile.
        path.write_text("ui:\n  theme: gruvbox\n")
    finally:
        os.close(descriptor)
    stdout, stderr = saver.communicate(timeout=GENEROUS_SECONDS)
    assert saver.returncode == 0, stderr
    [outcome] = json.loads(stdout)
    assert not outcome["won"]
    assert "changed on disk" in outcome["error"]
    assert path.read_text() == "ui:\n  theme: gruvbox\n"
