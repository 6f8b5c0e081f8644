"""The gate: may the programs a workspace file defines run now?

Priority, first match wins:
1. `--trust-workspace` (this run only) → trusted.
2. This session's *Not now* → not now (asked again at the next start).
3. This session's *Trust* for exactly these definitions → trusted (also when the store could
   not be written).
4. The store: *Never for this folder* → never; trusted with the same fingerprint → trusted;
   trusted with another fingerprint (a definition was added or changed, or a workspace
   script one names: `forge.agent.trust.scripts`) → changed (ask again); no decision, or an
   unusable store → undecided (ask).

A file that defines nothing needs no trust. Only `trusted` lets anything run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path

from forge.agent.trust.programs import ProgramSource, program_digest
from forge.agent.trust.scripts import fingerprint_with_scripts
from forge.agent.trust.store import TrustStore

logger = logging.getLogger(__name__)


class TrustStatus(StrEnum):
    """Where one defining file stands; the values are said to people."""

    NOTHING = "defines nothing to run"
    TRUSTED = "trusted"
    UNDECIDED = "not trusted (not decided yet)"
    CHANGED = "not trusted (changed since it was trusted)"
    NOT_NOW = "not trusted this session (Not now)"
    NEVER = "never trusted (Never for this folder)"


ASKING = frozenset({TrustStatus.UNDECIDED, TrustStatus.CHANGED})
"""The statuses the TUI asks the user about."""


class WorkspaceTrust:
    """The trust of one workspace for one session: the store's decision plus this session's
    choices. Core logic with file I/O only through `TrustStore`; no UI."""

    def __init__(
        self,
        workspace: Path,
        store: TrustStore | None = None,
        *,
        trusted_for_run: bool = False,
        env_allowlist: Iterable[str] = (),
    ) -> None:
        """`trusted_for_run`: `--trust-workspace`, trusted without asking or storing.
        `env_allowlist`: the user's `trust.env_allowlist` (updated on a settings change)."""
        self.workspace = workspace.expanduser().resolve()
        self.store = store or TrustStore()
        self.trusted_for_run = trusted_for_run
        self.env_allowlist: frozenset[str] = frozenset(env_allowlist)
        self._not_now = False
        self._session_trusted: dict[str, str] = {}

    @property
    def store_problem(self) -> str:
        """Why the store could not be used at the last check ("" when it could)."""
        return self.store.problem

    def status(self, source: ProgramSource) -> TrustStatus:
        """Where `source` stands now (see the module docstring for the order)."""
        if not source.programs:
            return TrustStatus.NOTHING
        if self.trusted_for_run:
            return TrustStatus.TRUSTED
        if self._not_now:
            return TrustStatus.NOT_NOW
        fingerprint = self.fingerprint(source)
        if self._session_trusted.get(source.file) == fingerprint:
            return TrustStatus.TRUSTED
        record = self.store.get(self.workspace)
        if record is None:
            return TrustStatus.UNDECIDED
        if record.decision == "never":
            return TrustStatus.NEVER
        if record.fingerprints.get(source.file) == fingerprint:
            return TrustStatus.TRUSTED
        return TrustStatus.CHANGED

    def trusted_programs(self, file: str) -> dict[str, str] | None:
        """Each program of `file` as last trusted (name → `program_digest`), from the store;
        None when nothing of that file was stored as trusted."""
        record = self.store.get(self.workspace)
        if record is None or record.decision != "trusted":
            return None
        found = record.programs.get(file)
        return dict(found) if found is not None else None

    def fingerprint(self, source: ProgramSource) -> str:
        """What trust of `source` is given to: its definitions and the contents of the
        workspace scripts they name (`forge.agent.trust.scripts`), read now: each check
        sees the scripts as they are."""
        return fingerprint_with_scripts(source, self.workspace)

    def permits(self, source: ProgramSource) -> bool:
        """Whether the programs `source` defines may run now: the one question every
        workspace-defined program passes before it starts."""
        allowed = self.status(source) is TrustStatus.TRUSTED
        if not allowed and source.programs:
            logger.info("workspace programs of %s not started: not trusted", source.file)
        return allowed

    def to_ask(self, sources: Sequence[ProgramSource]) -> list[ProgramSource]:
        """The sources the user should be asked about now (undecided or changed)."""
        return [source for source in sources if self.status(source) in ASKING]

    def allowed_variables(self) -> frozenset[str]:
        """The environment variables a trusted workspace definition may receive."""
        return self.env_allowlist

    def adopt(self, previous: WorkspaceTrust) -> bool:
        """Carry this session's choices over from `previous` (a new session of the same
        session, e.g. after `/clear`); whether there were any."""
        self._not_now = previous._not_now
        self._session_trusted = dict(previous._session_trusted)
        self.trusted_for_run = self.trusted_for_run or previous.trusted_for_run
        return self._not_now or bool(self._session_trusted)

    # --- decisions ---------------------------------------------------------------------------
    def trust(self, sources: Sequence[ProgramSource]) -> str:
        """*Trust*: the definitions of `sources` as they are now may run, in this session and
        (stored) later. Returns a warning when the store could not be written ("" if it was):
        the trust then holds for this session only."""
        fingerprints = {s.file: self.fingerprint(s) for s in sources if s.programs}
        programs: dict[str, Mapping[str, str]] = {
            s.file: {p.name: program_digest(p) for p in s.programs} for s in sources if s.programs
        }
        self._not_now = False
        self._session_trusted.update(fingerprints)
        # The files not asked about keep what was trusted of them: trusting a changed hook
        # file must not make an unchanged `.forge/mcp.yaml` ask again at the next start.
        stored = self.store.get(self.workspace)
        if stored is not None and stored.decision == "trusted":
            fingerprints = {**stored.fingerprints, **fingerprints}
            programs = {**stored.programs, **programs}
        try:
            self.store.set(self.workspace, "trusted", fingerprints, programs)
        except OSError as error:
            logger.warning("trust not stored: %s", error)
            return f"the decision could not be saved ({error}); it holds for this session only"
        return ""

    def not_now(self) -> None:
        """*Not now*: nothing the workspace defines runs in this session; nothing stored."""
        self._not_now = True
        self._session_trusted.clear()

    def never(self) -> str:
        """*Never for this folder*: stored; never asked again until changed with /trust or
        `forge trust`. Returns a warning when it could not be stored ("" if it was)."""
        self.not_now()
        try:
            self.store.set(self.workspace, "never", {})
        except OSError as error:
            logger.warning("trust decision not stored: %s", error)
            return f"the decision could not be saved ({error}); it holds for this session only"
        return ""

    def revoke(self) -> bool:
        """Forget the stored decision and this session's (`forge trust --revoke`, `/trust
        revoke`): asked again next time. Whether a decision was stored. Raises OSError when
        the store cannot be written."""
        self._session_trusted.clear()
        self._not_now = False
        self.trusted_for_run = False
        return self.store.forget(self.workspace)
