"""Workspace trust: whether programs a workspace defines (its `.forge/mcp.yaml` servers today,
project hooks and the like later) may run. See docs/adr/0034-workspace-trust.md.

The one question every such feature asks is `WorkspaceTrust.permits(source)`: may the programs
this workspace file defines run now? The answer comes from the user's decision, stored per
absolute workspace path with a fingerprint of each file's definitions (`TrustStore`), and from
this session's choices (*Not now*, `--trust-workspace`).
"""

from forge.agent.trust.gate import TrustStatus, WorkspaceTrust
from forge.agent.trust.programs import ProgramSource, WorkspaceProgram, fingerprint_of
from forge.agent.trust.store import TrustRecord, TrustStore, trust_store_path

__all__ = [
    "ProgramSource",
    "TrustRecord",
    "TrustStatus",
    "TrustStore",
    "WorkspaceProgram",
    "WorkspaceTrust",
    "fingerprint_of",
    "trust_store_path",
]
