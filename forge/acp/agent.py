"""`ForgeAcpAgent`: the ACP agent side of `forge acp`, one Forge `Session` per ACP session.

Every request reaches the engine through `forge.session` (build_session and the Session's
verbs), as the TUI's and `forge run`'s do. See docs/adr/0044-acp-front-end.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AvailableCommandsUpdate,
    ClientCapabilities,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    RequestPermissionResponse,
    SessionCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionForkCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
    ToolCallUpdate,
)

from forge import __version__
from forge.acp import errors, steering
from forge.acp.attention import send_attention
from forge.acp.background_calls import follow_background
from forge.acp.client_mcp import client_servers
from forge.acp.commands import BUILTIN_NAMES, advertised, load_commands, parse_slash
from forge.acp.open_session import OpenSession
from forge.acp.prompt_images import prompt_images
from forge.acp.prompt_text import prompt_text
from forge.acp.relay import EditorChannel, TurnFailed, TurnRelay, Update
from forge.acp.replay import replay_updates
from forge.acp.script_trust import ask_about_changes
from forge.acp.server_trust import decide_servers, start_servers
from forge.acp.slash_run import run_slash
from forge.acp.updates import markdown_lines
from forge.agent.modes import MODE_DESCRIPTIONS, MODE_ORDER, MODE_TITLES, PermissionMode
from forge.config.provider_keys import main_api_key
from forge.config.settings import Settings
from forge.llm.image_parts import ImagePart
from forge.session.build import SessionOptions, build_session
from forge.session.core import Session
from forge.session.custom_commands import CustomCommands
from forge.session.images import ImageInputError, accepts_images
from forge.session.saved_sessions import SessionNotFoundError, SessionStore, workspace_key
from forge.session.trust_changes import watch_definitions

logger = logging.getLogger(__name__)

MODEL_OPTION = "model"
"""The id of the session config option that picks the model (ACP category "model")."""
MODEL_LIST_WAIT = 3.0
"""Seconds `session/new` waits for the server's model list (the configured model is
offered alone when it does not answer in time)."""
MCP_WAIT = 30.0
"""Seconds a turn waits at most for MCP servers still starting."""


class ForgeAcpAgent:
    """The ACP `Agent` interface over Forge sessions (see the module docstring).

    `load_settings` returns the settings to start a session with, or raises `RequestError`
    (invalid configuration); `trust_workspace` is `forge acp --trust-workspace`, and
    `max_llm_calls` (`--max-turns`) bounds one prompt's LLM calls."""

    def __init__(
        self,
        load_settings: Callable[[], Settings],
        *,
        trust_workspace: bool = False,
        max_llm_calls: int = 50,
    ) -> None:
        self._load_settings = load_settings
        self._trust_workspace = trust_workspace
        self._max_llm_calls = max_llm_calls
        self._client: Client | None = None
        self._sessions: dict[str, OpenSession] = {}
        self._background: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Client) -> None:
        """The SDK hands over the client connection."""
        self._client = conn

    # --- initialize --------------------------------------------------------------------------
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Forge's capabilities; no authentication method (the key comes from Forge's own
        configuration, and a missing one is named by `session/new`)."""
        try:  # images when the configured model takes them (docs/adr/0055, part 2)
            image = accepts_images(self._load_settings())
        except RequestError:
            image = False  # an invalid configuration: session/new names it
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=image, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), fork=SessionForkCapabilities()
                ),
            ),
            auth_methods=[],
            agent_info=Implementation(name="forge", title="Forge", version=__version__),
            field_meta=dict(steering.ADVERTISED),  # the adapters' steering extension
        )

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Extension requests: `_session/steering` (docs/adr/0057); others are unknown."""
        if method == steering.STEERING_METHOD:
            session_id = params.get("sessionId")
            if not isinstance(session_id, str):
                raise errors.invalid_params("sessionId is required")
            return steering.steer(self._opened(session_id), params)
        raise RequestError.method_not_found(f"_{method}")

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        """Forge offers no authentication method (`auth_methods` is empty): say so, and say
        how a key is given only when none is configured."""
        try:
            settings = await asyncio.to_thread(self._load_settings)
        except Exception:  # an invalid configuration: the sessions will say what is wrong
            settings = None
        has_key = settings is not None and bool(main_api_key(settings.llm))
        how = (
            "an API key is configured, so no authentication is needed"
            if has_key
            else errors.NO_KEY_MESSAGE
        )
        raise errors.invalid_params(
            f"unknown authentication method {method_id!r}: Forge offers none; {how}"
        )

    # --- sessions ----------------------------------------------------------------------------
    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        """A new Forge session for the workspace `cwd`."""
        opened = await self._open(cwd, None, mcp_servers)
        state = opened.session
        self._later(self._announce(opened))
        return NewSessionResponse(
            session_id=state.session_id,
            modes=self._modes(state),
            config_options=self._config_options(opened),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """Forge's saved session `session_id`: its history is sent as updates, then it goes
        on like a new one."""
        if (current := self._sessions.get(session_id)) is not None:
            if current.turn is not None and not current.turn.done():
                raise errors.turn_running(session_id)
            await self._close(session_id)
        opened = await self._open(cwd, session_id, mcp_servers)
        session = opened.session
        for update in replay_updates(session.messages, session.workspace, session.describe_call):
            await self._send(session.session_id, update)
        self._later(self._announce(opened))
        return LoadSessionResponse(
            modes=self._modes(session), config_options=self._config_options(opened)
        )

    async def fork_session(
        self, session_id: str, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> ForkSessionResponse:
        """A new session holding saved session `session_id`'s conversation (what `/fork`
        and `forge --resume ID --fork` write; the original stays as it is), opened like
        `session/new`; nothing is replayed, the editor has the history. `_meta`'s `turn` (a
        number, 1 the first turn) forks before that turn instead (docs/adr/0058)."""
        from forge.session.saved_sessions import fork_session

        current = self._sessions.get(session_id)
        if current is not None and current.turn is not None and not current.turn.done():
            raise errors.turn_running(session_id)
        turn = kwargs.get("turn")
        if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
            raise errors.invalid_params(f"_meta.turn must be a turn number, not {turn!r}")
        settings = await asyncio.to_thread(self._load_settings)
        workspace = workspace_of(cwd)
        try:
            await asyncio.to_thread(
                _whole_id, workspace, session_id, settings.trust.load_other_workspace_sessions
            )
            fork_id = await asyncio.to_thread(fork_session, SessionStore(), session_id, turn)
        except (SessionNotFoundError, ValueError) as error:
            raise errors.unknown_session(session_id, str(error)) from None
        opened = await self._open(cwd, fork_id, mcp_servers)
        self._later(self._announce(opened))
        return ForkSessionResponse(
            session_id=fork_id,
            modes=self._modes(opened.session),
            config_options=self._config_options(opened),
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """Forge's saved sessions (of the workspace `cwd` when given), newest first: what
        `forge sessions` lists, for an editor's history; all in one page. With `_meta`'s
        `search` (a text), only the sessions `forge sessions --search` finds, each with the
        line that holds it in its `_meta` (`match`; docs/adr/0058)."""
        from forge.session.saved_sessions import SessionSearch

        search = kwargs.get("search")
        matched: dict[str, str] = {}
        if isinstance(search, str) and search.strip():
            hits = await asyncio.to_thread(SessionSearch().search, search, cwd)
            infos = [hit.info for hit in hits]
            matched = {hit.info.id: hit.line for hit in hits}
        else:
            infos = await asyncio.to_thread(SessionStore().list_sessions, cwd)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=info.id,
                    cwd=info.workspace,
                    title=info.label or None,
                    updated_at=datetime.fromtimestamp(info.updated, UTC).isoformat(),
                    field_meta={"match": matched[info.id]} if info.id in matched else None,
                )
                for info in infos
            ]
        )

    async def _open(
        self, cwd: str, session_id: str | None, mcp_servers: list[Any] | None
    ) -> OpenSession:
        settings = await asyncio.to_thread(self._load_settings)
        if not main_api_key(settings.llm):
            raise errors.no_api_key()
        workspace = workspace_of(cwd)
        servers = client_servers(mcp_servers)
        try:
            if session_id is not None:
                await asyncio.to_thread(
                    _whole_id,
                    workspace,
                    session_id,
                    settings.trust.load_other_workspace_sessions,
                )
            session = await asyncio.to_thread(
                build_session,
                settings,
                workspace,
                SessionOptions(
                    session_id=session_id,
                    max_llm_calls=self._max_llm_calls,
                    trust_workspace=self._trust_workspace,
                ),
            )
        except (SessionNotFoundError, ValueError) as error:
            raise errors.unknown_session(session_id or "", str(error)) from None
        pending = bool(servers.settings) and not session.servers.permits(servers.source)
        session.start_background()
        starting = None
        if servers.settings and not pending:  # trusted: started now, awaited by the turn
            starting = asyncio.ensure_future(start_servers(session, servers))
        custom = load_commands(session.workspace, settings)
        models = await self._models(session)
        opened = OpenSession(session, custom, servers, pending, models, starting)
        if session.servers.trust is not None:
            opened.watcher = asyncio.ensure_future(watch_definitions(session))
        self._sessions[session.session_id] = opened
        return opened

    async def _models(self, session: Session) -> list[str]:
        current = session.settings.llm.model
        try:
            async with asyncio.timeout(MODEL_LIST_WAIT):
                listed = await session.list_models()
        except Exception as error:  # a server without a model list: offer the configured one
            logger.info("no model list: %s", error)
            listed = []
        return [current, *(name for name in listed if name != current)]

    async def _announce(self, opened: OpenSession) -> None:
        """After the session's response: its commands, and what was not started."""
        session_id = opened.session.session_id
        await self._send(
            session_id,
            AvailableCommandsUpdate(
                session_update="available_commands_update",
                available_commands=advertised(
                    opened.custom, _skills(opened.session, opened.custom)
                ),
            ),
        )
        repairs = [f"session file: {problem}" for problem in opened.session.log.problems]
        notes = [*repairs, *opened.servers.skipped, *opened.custom.problems]
        if notes:
            await self._send(
                session_id, update_agent_message_text(markdown_lines("\n".join(notes)) + "\n")
            )

    def _modes(self, session: Session) -> SessionModeState:
        return SessionModeState(
            current_mode_id=session.policy.mode.value,
            available_modes=[
                SessionMode(
                    id=mode.value, name=MODE_TITLES[mode], description=MODE_DESCRIPTIONS[mode]
                )
                for mode in MODE_ORDER
            ],
        )

    def _config_options(self, opened: OpenSession) -> list[Any]:
        current = opened.session.settings.llm.model
        models = opened.models if current in opened.models else [current, *opened.models]
        return [
            SessionConfigOptionSelect(
                id=MODEL_OPTION,
                name="Model",
                description="The model for this session's turns",
                category="model",
                type="select",
                current_value=current,
                options=[SessionConfigSelectOption(value=name, name=name) for name in models],
            )
        ]

    def _opened(self, session_id: str) -> OpenSession:
        opened = self._sessions.get(session_id)
        if opened is None:
            raise errors.unknown_session(session_id)
        return opened

    # --- modes and the model -----------------------------------------------------------------
    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        """Forge's permission mode, from the next tool call on."""
        opened = self._opened(session_id)
        try:
            mode = PermissionMode(mode_id)
        except ValueError:
            names = ", ".join(mode.value for mode in MODE_ORDER)
            raise errors.invalid_params(f"unknown mode {mode_id!r}; one of {names}") from None
        opened.session.set_mode(mode)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """The model (config option "model"), for this session only (like `/model`)."""
        opened = self._opened(session_id)
        if config_id != MODEL_OPTION or not isinstance(value, str) or not value.strip():
            raise errors.invalid_params(f"unknown option {config_id!r} or value {value!r}")
        self.switch_model(opened, value.strip())
        return SetSessionConfigOptionResponse(config_options=self._config_options(opened))

    def switch_model(self, opened: OpenSession, model: str) -> str:
        """Use `model` for the session's next turns; what changed."""
        session = opened.session
        llm = session.settings.llm.model_copy(update={"model": model})
        if model not in opened.models:
            opened.models.append(model)
        return session.apply_settings(session.settings.model_copy(update={"llm": llm}))

    async def announce_options(self, opened: OpenSession) -> None:
        """Tell the editor the session's options changed (a `/model` command)."""
        await self._send(
            opened.session.session_id,
            ConfigOptionUpdate(
                session_update="config_option_update",
                config_options=self._config_options(opened),
            ),
        )

    async def reload_commands(self, opened: OpenSession) -> None:
        """Read the custom command files again; tell the editor when the list changed."""
        session = opened.session
        custom = load_commands(session.workspace, session.settings)
        if set(custom.commands) == set(opened.custom.commands):
            return
        opened.custom = custom
        await self._send(
            session.session_id,
            AvailableCommandsUpdate(
                session_update="available_commands_update",
                available_commands=advertised(custom, _skills(session, custom)),
            ),
        )

    async def announce_mode(self, opened: OpenSession) -> None:
        """Tell the editor the mode changed (a `/mode` command)."""
        session = opened.session
        await self._send(
            session.session_id,
            CurrentModeUpdate(
                session_update="current_mode_update", current_mode_id=session.policy.mode.value
            ),
        )

    # --- turns -------------------------------------------------------------------------------
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        """One turn (or a slash command); ends with the stop reason."""
        opened = self._opened(session_id)
        if opened.turn is not None and not opened.turn.done():
            raise errors.turn_running(session_id)
        text = prompt_text(prompt, opened.session.workspace)
        try:
            images = prompt_images(prompt, opened.session.settings)
        except ImageInputError as error:
            raise errors.invalid_params(str(error)) from None
        if not text and not images:
            raise errors.invalid_params("the prompt holds no text Forge can use")
        relay = TurnRelay(opened.session, _Channel(self, session_id))
        relay.follow = self._follower(opened.session, relay.channel)
        opened.turn = asyncio.create_task(self._turn(opened, relay, text, images))
        try:
            await asyncio.wait({opened.turn})
        finally:
            if not opened.turn.done():  # this request was cancelled (the client went away)
                opened.turn.cancel()
                with contextlib.suppress(BaseException):
                    await opened.turn
        with contextlib.suppress(ConnectionError):
            if opened.turn.cancelled():
                await relay.report_cancelled()
            await relay.report_usage()
        if opened.turn.cancelled():
            return PromptResponse(stop_reason="cancelled")
        if opened.turn.exception() is None:
            notify = opened.session.settings.ui.notify
            reason = opened.turn.result()
            await send_attention(self._client, notify, session_id, "turn_end", reason)
        try:
            return PromptResponse(stop_reason=opened.turn.result())
        except TurnFailed as error:
            raise errors.internal(str(error)) from None

    async def _turn(
        self,
        opened: OpenSession,
        relay: TurnRelay,
        text: str,
        images: tuple[ImagePart, ...] = (),
    ) -> StopReason:
        session = opened.session
        if opened.servers_starting is not None:
            await opened.servers_starting
        if opened.servers_pending:
            opened.servers_pending = False
            await decide_servers(opened, relay.channel)
        await ask_about_changes(session, relay.channel)
        await session.servers.wait(MCP_WAIT)
        if not opened.hooks_started:  # SessionStart: startup, or resume after session/load
            opened.hooks_started = True
            async for hook_event in session.start_hooks():
                await relay.relay(hook_event)
        slash = parse_slash(text) if not images else None
        if slash is not None:
            handled = await run_slash(self, opened, slash, relay)
            if handled is not None:
                return handled
        model = None
        typed = text  # what the user typed: the session keeps it beside an expansion
        if slash is not None and (found := opened.custom.expand_input(text)) is not None:
            command, text = found
            model = command.model or None
        elif slash is not None:  # `/name args` naming a skill (docs/adr/0046)
            taken = [*BUILTIN_NAMES, *opened.custom.commands]
            text = session.skill_command(text, taken=taken) or text
        typed_text = typed if typed != text else None
        turn = session.run_turn(text, model=model, typed=typed_text, images=images)
        return await relay.run(turn)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """End the session's turn as Esc does (pending calls recorded as cancelled)."""
        opened = self._sessions.get(session_id)
        if opened is not None and opened.turn is not None and not opened.turn.done():
            opened.turn.cancel()

    # --- the connection ------------------------------------------------------------------------
    async def _send(self, session_id: str, update: Any) -> None:
        if self._client is None:
            raise ConnectionError("no client")
        await self._client.session_update(session_id=session_id, update=update)

    async def ask(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """`session/request_permission` to the editor."""
        if self._client is None:
            raise ConnectionError("no client")
        opened = self._sessions.get(session_id)
        notify = opened.session.settings.ui.notify if opened is not None else "off"
        await send_attention(self._client, notify, session_id, "approval", tool_call.title or "")
        return await self._client.request_permission(
            session_id=session_id, tool_call=tool_call, options=options
        )

    def _follower(self, session: Session, channel: EditorChannel) -> Callable[[str, str], None]:
        """Follows a background command's card until the command ends (docs/adr/0057)."""

        def follow(call_id: str, command_id: str) -> None:
            if session.background is not None:
                self._later(
                    follow_background(session.background, call_id, command_id, channel.send)
                )

        return follow

    def _later(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _close(self, session_id: str) -> None:
        opened = self._sessions.pop(session_id, None)
        if opened is None:
            return
        if opened.servers_starting is not None and not opened.servers_starting.done():
            opened.servers_starting.cancel()
        if opened.watcher is not None:
            opened.watcher.cancel()
            with contextlib.suppress(BaseException):
                await opened.watcher
        if opened.turn is not None and not opened.turn.done():
            opened.turn.cancel()
            with contextlib.suppress(BaseException):
                await opened.turn
        await opened.session.aclose()

    async def shutdown(self) -> None:
        """The client is gone: cancel every running turn (recorded as Esc records it, so the
        session file holds the cut-off turn) and close every session."""
        for task in list(self._background):
            task.cancel()
        for session_id in list(self._sessions):
            try:
                await self._close(session_id)
            except Exception:
                logger.exception("closing session %s failed", session_id)


def _whole_id(workspace: Path, session_id: str, other_workspaces: bool) -> None:
    """`session/load` takes a whole id (the editor keeps the id it asked for); a unique part
    of one, which `--resume` accepts, is refused with the whole id named. A session of
    another workspace is refused too, naming both, unless `other_workspaces`
    (`trust.load_other_workspace_sessions`)."""
    store = SessionStore()
    found = store.find(workspace, session_id)
    if found != session_id:
        raise SessionNotFoundError(
            f"no session {session_id!r}; session/load takes a whole id (did you mean {found}?)"
        )
    recorded = store.workspace_of(session_id)
    if not other_workspaces and recorded != workspace_key(workspace):
        raise SessionNotFoundError(
            f"session {session_id} belongs to the workspace {recorded or '(unknown)'}, not "
            f"{workspace_key(workspace)}; open it there, or set "
            "trust.load_other_workspace_sessions to load it here"
        )


def workspace_of(cwd: str) -> Path:
    """The workspace an ACP `cwd` names; it must be an existing absolute directory."""
    workspace = Path(cwd).expanduser()
    if not workspace.is_absolute() or not workspace.is_dir():
        raise errors.invalid_params(f"cwd must be an existing absolute directory: {cwd!r}")
    return workspace


class _Channel:
    """A turn's way to the editor (`relay.EditorChannel`)."""

    def __init__(self, agent: ForgeAcpAgent, session_id: str) -> None:
        self._agent = agent
        self._session_id = session_id

    async def send(self, update: Update) -> None:
        await self._agent._send(self._session_id, update)

    async def ask(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        return await self._agent.ask(self._session_id, tool_call, options)


def _skills(session: Session, custom: CustomCommands) -> list[tuple[str, str]]:
    """The skills the editor may offer as commands (built-in and custom commands win)."""
    return session.skill_commands(taken=[*BUILTIN_NAMES, *custom.commands])
