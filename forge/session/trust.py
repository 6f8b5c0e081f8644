"""Workspace trust as the front ends see it (docs/adr/0034, 0059 Part 5): the value types a
trust question carries and the words that show a workspace's programs.

The decision itself stays in the engine (`forge.agent.trust`: the gate, the store); a front
end asks through `session.servers` and shows what it is given with these names.
"""

from __future__ import annotations

from forge.agent.trust import ProgramSource, TrustStatus, WorkspaceProgram, WorkspaceTrust
from forge.agent.trust.programs import fingerprint_of, printable, program_digest
from forge.agent.trust.sources import describe_programs

__all__ = [
    "ProgramSource",
    "TrustStatus",
    "WorkspaceProgram",
    "WorkspaceTrust",
    "describe_programs",
    "fingerprint_of",
    "printable",
    "program_digest",
]
