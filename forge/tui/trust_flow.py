"""Workspace trust in the TUI (docs/adr/0034): ask once — at start, or when a definition
first appears or changes (the `.forge/mcp.yaml` watcher calls `check`) — and `/trust`.

The answers: *Trust* (stored; the servers start now), *Not now* (nothing of the workspace
runs this session; asked again next start), *Never for this folder* (stored; never asked
again). A decision survives `/clear` and `/sessions`: the new session adopts this session's.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import App

if TYPE_CHECKING:
    from forge.session.core import Session
    from forge.session.trust import ProgramSource, WorkspaceTrust
    from forge.tui.screens.trust import Mark, TrustChoice
    from forge.tui.widgets.chat import ChatView


class TrustHost(Protocol):
    """What the flow needs of the app (`ForgeApp` provides it)."""

    chat: ChatView


CHOICE_NOTICES = {
    # The files may hold MCP servers, hooks or skills' pre-approved tools: name none of them.
    "trust": "Trusted this workspace: what {files} define is used from now on. A new or "
    "changed definition asks again; `/trust` changes this.",
    "not_now": "Not used this session: what {files} define (this workspace is not "
    "trusted). `/trust` decides now; Forge asks again at the next start.",
    "never": "Never for this folder: what {files} define will not run and Forge will not "
    "ask again. `/trust` or `forge trust` changes this.",
}


def _files(sources: list[ProgramSource]) -> str:
    return ", ".join(f"`{source.file}`" for source in sources) or "this workspace"


class WorkspaceTrustFlow:
    """Asks about, and applies, the trust of one app's workspace across its sessions."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.session: Session | None = None
        self._asking = False
        self._told_problem = ""
        self._told_never = False
        self.decisions = 0
        """Answers applied so far (tests wait on it)."""
        self._known: dict[str, dict[str, str]] = {}
        """Per file, each program's name and command digest as last trusted or answered in
        this session: a re-ask marks what is new or changed since (docs/adr/0048)."""

    @property
    def _chat(self) -> ChatView:
        host: TrustHost = self.app  # type: ignore[assignment]  # ForgeApp is a TrustHost
        return host.chat

    def attach(self, session: Session) -> None:
        """Follow `session` (a new session keeps this session's *Not now*), then check."""
        previous, self.session = self.session, session
        if previous is not None:
            session.servers.adopt_trust(previous.servers)
        self.app.call_later(self.check)

    async def check(self) -> None:
        """Ask about the workspace's files that are undecided or changed (one dialog at a
        time); say once when the store is unusable or the folder is never trusted."""
        trust = self._trust()
        if trust is None or self._asking:
            return
        sources = await asyncio.to_thread(self._sources)
        to_ask = trust.to_ask(sources)
        from forge.session.trust import TrustStatus

        for source in sources:
            if trust.status(source) is TrustStatus.TRUSTED:
                self._remember(source)
        if trust.store_problem and trust.store_problem != self._told_problem:
            self._told_problem = trust.store_problem
            await self._chat.add_notice(f"Workspace trust: {trust.store_problem}.", kind="error")
        never = [s for s in sources if trust.status(s) is TrustStatus.NEVER]
        if never and not self._told_never:
            self._told_never = True
            await self._chat.add_notice(CHOICE_NOTICES["never"].format(files=_files(never)))
        if to_ask:
            self._asking = True
            self.app.run_worker(
                self._ask(to_ask), group="trust-dialog", exclusive=True, exit_on_error=False
            )

    def _trust(self) -> WorkspaceTrust | None:
        return self.session.servers.trust if self.session is not None else None

    def _sources(self) -> list[ProgramSource]:
        assert self.session is not None
        return self.session.servers.sources()

    async def _ask(self, sources: list[ProgramSource], status: str = "") -> None:
        from forge.tui.screens.trust import TrustScreen

        trust = self._trust()
        try:
            if trust is None:
                return
            referenced = {name for s in sources for p in s.programs for name in p.variables}
            refused = sorted(referenced - trust.allowed_variables())
            if not status:
                status = "; ".join(f"{s.file}: {trust.status(s).value}" for s in sources)
            marks = await asyncio.to_thread(self._marks, sources)  # reads the store
            screen = TrustScreen(trust.workspace, sources, refused, status, marks)
            choice = await self.app.push_screen_wait(screen)
            for source in sources:
                self._remember(source)
            await self.apply(choice, sources)
        finally:
            self._asking = False
        # A file that changed while the dialog was open was not part of the answer: ask again.
        await self.check()

    def _remember(self, source: ProgramSource) -> None:
        from forge.session.trust import program_digest

        self._known[source.file] = {p.name: program_digest(p) for p in source.programs}

    def _marks(self, sources: list[ProgramSource]) -> dict[tuple[str, str], Mark]:
        """The definitions of `sources` new or changed since the last answer about their file
        in this session, else since it was last trusted (the store keeps each program's
        digest, so the marks survive a restart); none for a file never answered about."""
        from forge.session.trust import program_digest

        trust = self._trust()
        marks: dict[tuple[str, str], Mark] = {}
        for source in sources:
            known = self._known.get(source.file)
            if known is None and trust is not None:
                known = trust.trusted_programs(source.file)
            for program in source.programs if known is not None else ():
                before = known.get(program.name) if known is not None else None
                if before is None:
                    marks[(source.file, program.name)] = "new"
                elif before != program_digest(program):
                    marks[(source.file, program.name)] = "changed"
        return marks

    async def apply(self, choice: TrustChoice, sources: list[ProgramSource]) -> None:
        """Record `choice` for `sources`, start or stop their servers, and say so."""
        trust = self._trust()
        if trust is None or self.session is None:
            return
        warning = ""
        if choice == "trust":
            warning = trust.trust(sources)
        elif choice == "never":
            warning = trust.never()
            self._told_never = True
        else:
            trust.not_now()
        self.session.servers.trust_changed()  # the project's hooks and servers follow it
        if choice == "trust":  # at the start: the project's SessionStart hooks run now
            from forge.tui.hook_flows import start_trusted_session_hooks

            start_trusted_session_hooks(self.app, self.session)
        text = CHOICE_NOTICES[choice].format(files=_files(sources))
        if warning:
            text += f" ({warning})"
        await self._chat.add_notice(text, kind="error" if warning else "info")
        self.decisions += 1

    async def command(self, argument: str) -> None:
        """`/trust`: show where the workspace stands and ask (to change it); `/trust revoke`
        forgets the stored decision and stops the workspace's servers for this session."""
        from forge.session.trust import describe_programs, printable

        trust = self._trust()
        if trust is None or self.session is None:
            return
        if argument.strip() == "revoke":
            try:
                had = trust.revoke()
            except OSError as error:
                await self._chat.add_notice(f"Could not forget the decision: {error}", kind="error")
                return
            trust.not_now()
            self.session.servers.trust_changed()
            said = "Decision forgotten" if had else "No decision was stored"
            await self._chat.add_notice(
                f"{said}: the workspace's MCP servers are stopped, and its hooks and skills' "
                "allowed-tools are left out, for this session; Forge asks again at the next "
                "start."
            )
            return
        if argument.strip():
            await self._chat.add_notice("Usage: `/trust` or `/trust revoke`.", kind="error")
            return
        sources = await asyncio.to_thread(self._sources)
        defined = [s for s in sources if s.programs]
        lines = [f"Workspace trust for `{printable(str(trust.workspace))}`:"]
        for source in defined:
            lines.append(f"\n`{source.file}`: {trust.status(source).value}; it would run:\n")
            lines.extend(f"    {line}" for line in describe_programs(source))
        if not defined:
            lines.append(
                "\nIt defines nothing Forge would run (no `.forge/mcp.yaml` servers, no "
                "project hooks, no skills with `allowed-tools`)."
            )
        await self._chat.add_notice("\n".join(lines))
        if defined and not self._asking:
            self._asking = True
            self.app.run_worker(
                self._ask(defined), group="trust-dialog", exclusive=True, exit_on_error=False
            )
