"""Process groups: signal one, and ask whether any process of it still runs.

A model's command leads a process group of its own (`execute_command`, background commands):
ending the command means ending the group (docs/adr/0021).
"""

from __future__ import annotations

import os


def signal_group(group: int, signal_number: int) -> bool:
    """Send a signal to a process group; False if the group no longer exists."""
    try:
        os.killpg(group, signal_number)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def group_alive(group: int) -> bool:
    """Whether a process of `group` still runs. Zombies do not count: a killed grandchild
    whose new parent (PID 1 of a container, say) is slow to reap it would otherwise hold Esc
    for the whole grace period. Without /proc, any process (zombie or not) counts."""
    if not signal_group(group, 0):
        return False
    try:
        entries = list(os.scandir("/proc"))
    except OSError:
        return True
    return any(entry.name.isdigit() and running_in_group(entry.path, group) for entry in entries)


def running_in_group(process_directory: str, group: int) -> bool:
    try:
        with open(os.path.join(process_directory, "stat"), encoding="ascii", errors="replace") as f:
            stat = f.read()
    except OSError:
        return False
    # "pid (name) state ppid pgrp ..."; the name may hold spaces and parentheses.
    fields = stat[stat.rfind(")") + 2 :].split()
    return len(fields) > 2 and fields[2] == str(group) and fields[0] not in ("Z", "X")
