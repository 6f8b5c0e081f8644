"""`Session.history`: the session's recorded turns and going back to an earlier point.

`/undo` and `/rewind` (and `forge acp`'s `/undo`) plan a restore, ask about files edited
since Forge wrote them, then apply it; `rewind_conversation` takes the conversation back too.
The session file's name and origin (`/rename`, a fork) are read here as well. See
forge.session.restore for the plan and result types, docs/adr/0027 and docs/adr/0059 part 4.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge.agent.history.checkpoints import CheckpointStore
from forge.agent.history.rewind import SessionTurn, rewind_conversation, session_turns
from forge.agent.history.session_file import SessionLog
from forge.agent.tools.registry import ToolRegistry
from forge.agent.turn.loop import Agent
from forge.session.restore import (
    PlannedRestore,
    RestoreResult,
    RewindPoint,
    plan_rewind,
    plan_undo,
    restore_files,
    rewind_points,
)

if TYPE_CHECKING:
    from forge.agent.skills.catalog import SkillCatalog


class SessionHistory:
    """The turns of one session as its file records them, their checkpoints, and rewinding.

    Holds the parts a settings switch never replaces: the agent (conversation, checkpoints),
    the session file, the tools' read ledger and the skills (a rewind unloads later ones)."""

    def __init__(
        self,
        agent: Agent,
        log: SessionLog,
        registry: ToolRegistry,
        skills: SkillCatalog | None = None,
    ) -> None:
        self._agent = agent
        self._log = log
        self._registry = registry
        self._skills = skills

    # --- the session file --------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The name given with /rename ("" when none)."""
        return str(self._log.header.get("name") or "")

    @property
    def forked_from(self) -> str:
        """The id of the session this one was forked from ("" when it was not)."""
        return str(self._log.header.get("forked_from") or "")

    def rename(self, name: str) -> None:
        """Name the session `name` (recorded in its file; lists and the header show it)."""
        self._log.record_name(name)

    def turns(self) -> list[SessionTurn]:
        """The session's turns, oldest first, as `/rewind` lists them."""
        return session_turns(self._log.path) if self._log.started else []

    # --- checkpoints and rewinding -------------------------------------------------------------
    @property
    def checkpoints(self) -> CheckpointStore | None:
        """The files' checkpoints (none with `forge run --ephemeral`; docs/adr/0027)."""
        store = self._agent.checkpoints
        return store if isinstance(store, CheckpointStore) else None

    def rewind_points(self) -> list[RewindPoint]:
        """The session's turns, oldest first, each with the files its checkpoint holds: what
        `/rewind` lists."""
        return rewind_points(self.turns(), self.checkpoints)

    def plan_restore(self, before: str | None = None) -> PlannedRestore | None:
        """Plan putting files back, touching nothing: with `before` None, the files of the last
        turn that changed files (`/undo`); with a turn id, every file changed from that turn on
        (`/rewind`). The plan names the files edited since Forge wrote them, to ask about
        before `restore`. None when there is nothing to undo or no checkpoints are kept."""
        store = self.checkpoints
        if store is None:
            return None
        if before is None:
            return plan_undo(store, self.turns())
        return plan_rewind(store, self.turns(), before)

    def restore(
        self, planned: PlannedRestore, *, overwrite_conflicts: bool = False
    ) -> RestoreResult:
        """Put `planned`'s files back; a file edited since Forge wrote it is kept unless
        `overwrite_conflicts`."""
        store = self.checkpoints
        assert store is not None, "planned by plan_restore, which needs the checkpoints"
        return restore_files(store, planned, overwrite_conflicts=overwrite_conflicts)

    def undo(self, *, overwrite_conflicts: bool = False) -> RestoreResult | None:
        """Restore every file the last turn that changed files changed, without asking; None
        when there is nothing to undo."""
        planned = self.plan_restore()
        if planned is None:
            return None
        return self.restore(planned, overwrite_conflicts=overwrite_conflicts)

    def rewind_conversation(self, turn_id: str) -> None:
        """Take the conversation back to just before turn `turn_id` (recorded in the log);
        the model reads files again before writing them."""
        conversation = self._agent.conversation
        rewind_conversation(conversation, self._log, turn_id, self._registry.read_ledger())
        if self._skills is not None:  # a skill loaded after that turn is no longer loaded
            self._skills.keep_loaded_in(conversation.messages)
