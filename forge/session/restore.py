"""Going back to an earlier point: what `/undo` and `/rewind` see and do through the session.

A restore is planned first and applied second, so a front end can ask the user about files
edited since Forge wrote them (overwrite or keep) in between: `Session.history.plan_restore`
returns a `PlannedRestore` naming those conflicts, `Session.history.restore` applies it with the
user's answer. `Session.history.rewind_points` lists the turns a `/rewind` can go back before,
each with the files its checkpoint holds. The types here are the session's own, so a front end
needs neither the checkpoint store nor the session log's reader (docs/adr/0027, docs/adr/0041's
addendum).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from forge.agent.history.checkpoints import CheckpointStore, RestorePlan, describe_outcome
from forge.agent.history.rewind import SessionTurn

DROPPED_NOTE = "files not kept (checkpoints.max_bytes)"
UNDONE_NOTE = "files undone"


@dataclass(frozen=True, slots=True)
class RewindPoint:
    """One turn of the session as `/rewind` lists it: going back before it is a rewind."""

    id: str
    """The id of the user message that started the turn."""
    text: str
    """What the user typed (the prompt gets it back after a conversation rewind)."""
    ran_commands: bool
    """It ran shell commands, which no checkpoint can undo."""
    in_context: bool
    """Its user message is still in the conversation (False: compacted away)."""
    files: tuple[str, ...] = ()
    """The paths its checkpoint holds, in the order they were first changed."""
    note: str = ""
    """`UNDONE_NOTE`, `DROPPED_NOTE`, or empty."""

    def title(self, words: int = 8) -> str:
        """The first `words` words of the user message, on one line."""
        parts = self.text.split()
        return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


@dataclass(frozen=True, slots=True)
class PlannedRestore:
    """Files to put back as they were before some turns, not yet touched."""

    plan: RestorePlan
    title: str
    """The first restored turn's title ("" when no turn changed files)."""
    conflicts: tuple[str, ...]
    """Files edited since Forge wrote them: restoring them loses those edits (ask first)."""
    ran_commands: bool
    """The restored turns ran shell commands, whose effects stay."""
    created: str
    """Where files that a restore deletes came from, in words ("created by that turn")."""


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """What a restore did, in one readable paragraph."""

    text: str
    """"Restored `a.py`. Removed `b.txt` (created by that turn)." ("" when nothing changed)."""
    failed: bool
    """Some file could not be put back (the text says which and why)."""


def rewind_points(turns: Sequence[SessionTurn], store: CheckpointStore | None) -> list[RewindPoint]:
    """The session's `turns` (oldest first) with the files each one's checkpoint holds."""
    points = []
    for turn in turns:
        checkpoint = store.turn(turn.id) if store is not None else None
        files: tuple[str, ...] = ()
        note = ""
        if checkpoint is not None:
            files = tuple(checkpoint.changes)
            if checkpoint.dropped:
                note = DROPPED_NOTE
            elif checkpoint.undone:
                note = UNDONE_NOTE
        points.append(
            RewindPoint(turn.id, turn.text, turn.ran_commands, turn.in_context, files, note)
        )
    return points


def plan_undo(store: CheckpointStore, turns: Sequence[SessionTurn]) -> PlannedRestore | None:
    """Putting back the files of the last turn that changed files; None when there is none."""
    plan = store.plan_undo()
    if plan is None:
        return None
    first = plan.turns[0]
    ran = any(turn.ran_commands for turn in turns if turn.id == first.turn)
    return _planned(plan, first.title, ran, "created by that turn")


def plan_rewind(
    store: CheckpointStore, turns: Sequence[SessionTurn], turn_id: str
) -> PlannedRestore:
    """Putting back every file changed from turn `turn_id` on (KeyError: no such turn)."""
    ids = [turn.id for turn in turns]
    if turn_id not in ids:
        raise KeyError(turn_id)
    index = ids.index(turn_id)
    start = turns[index]
    plan = store.plan(store.turns_since(start.created))
    ran = any(turn.ran_commands for turn in turns[index:])
    return _planned(plan, start.title(), ran, "created since then")


def _planned(plan: RestorePlan, title: str, ran: bool, created: str) -> PlannedRestore:
    conflicts = tuple(file.path for file in plan.conflicts)
    return PlannedRestore(plan, title, conflicts, ran, created)


def restore_files(
    store: CheckpointStore, planned: PlannedRestore, *, overwrite_conflicts: bool
) -> RestoreResult:
    """Apply `planned`: conflicting files are overwritten only with `overwrite_conflicts`
    (else kept, and the text says so); the restored turns are marked undone."""
    outcome = store.apply(planned.plan, overwrite_conflicts=overwrite_conflicts)
    changed = outcome.restored or outcome.removed or outcome.failed or outcome.skipped
    text = describe_outcome(outcome, planned.created) if changed else ""
    return RestoreResult(text, bool(outcome.failed))
