"""Fixtures for the TUI tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest


@pytest.fixture
def server_gates() -> Iterator[list[threading.Event]]:
    """Events a scripted responder blocks the loopback server's thread on. All are set when
    the test ends, pass or fail, so a failed test never leaves the shared server stuck for
    the tests after it."""
    gates: list[threading.Event] = []
    yield gates
    for gate in gates:
        gate.set()
