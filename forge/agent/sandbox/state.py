"""What the sandbox does now (docs/adr/0053), as a value: the status pane, `/sandbox` and
`forge run`'s first record show it. Light on purpose: the TUI imports it before its first frame."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxState:
    """What the sandbox does now, for people and records."""

    enabled: bool
    """Whether the model's commands run confined."""
    mechanism: str
    """"bubblewrap", or "none"."""
    network: bool
    """Whether confined commands may use the network (always true when not enabled)."""
    mode: str = "auto"
    """`tools.sandbox.mode`."""
    reason: str = ""
    """Why commands are not confined ("" when they are)."""
    details: tuple[str, ...] = ()
    """One line per promise (writable paths, hidden paths, network, processes)."""
    refuses: bool = False
    """`mode: on` without a mechanism: every model command is refused."""

    def record(self) -> dict[str, object]:
        """`forge run`'s `"sandbox"` object."""
        return {"enabled": self.enabled, "mechanism": self.mechanism, "network": self.network}

    def summary(self) -> str:
        """One line: "on (bubblewrap, no network)", "off (tools.sandbox.mode: off)"."""
        if self.enabled:
            return f"on ({self.mechanism}, {'network' if self.network else 'no network'})"
        if self.refuses:
            return f"unavailable, commands refused ({self.reason})"
        return f"off ({self.reason})"
