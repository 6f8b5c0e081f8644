"""Agent definitions: Markdown files with YAML front matter that describe a subagent.

Read from the project (`.forge/agents/*.md`, then `.claude/agents/*.md`) and the user's
config folder (`$XDG_CONFIG_HOME/forge/agents/*.md`), beside the built-in `explore` agent. A
project definition wins over a user one of the same name, and both over a built-in; every
clash is reported, as custom commands' clashes are (`forge.agent.input.custom_commands`). The front
matter's fields:

- `name`, `description` (required): how the model calls the agent, and when it should.
- `tools`: the tools the child may use (a list, or Claude Code's comma-separated line; an MCP
  server's tools as `server__*`; Claude Code's names `Read`, `Grep`, `Bash`, … mapped to
  Forge's). Default: every tool but `task` (children cannot start children).
- `model`: the child's model, any name the server serves; default (or `inherit`): the
  parent's (with `provider: summarization`, the summarization model).
- `provider`: which configured server answers the child: `main` (default: the session's) or
  `summarization` (the server summaries go to, `llm.summarization_*`: a cheaper server or a
  local one).
- `max_turns`: the child's LLM requests at most (default 30).
- `permission_mode`: `read-only`, `ask`, `accept-edits` or `auto` (Claude Code's
  `plan`/`default`/`acceptEdits`/`bypassPermissions` too); never looser than the parent's mode
  when the child runs.

The body is the child's system prompt. A file that cannot be used is reported by file and
field, never dropped without a word. See docs/adr/0045-subagents.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from forge.agent.modes import PermissionMode

PROVIDERS = ("main", "summarization")
"""What a definition's `provider` may name: the session's server, or the summarization one."""
AGENTS_DIRECTORY_NAME = "agents"
DEFAULT_MAX_TURNS = 30
MAX_FILE_BYTES = 64 * 1024
"""The default of `agents.max_file_bytes`."""
TASK_TOOL = "task"
"""The tool that starts a child; never offered to a child (depth 1)."""
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)

CLAUDE_TOOL_NAMES = {
    "read": "read_file",
    "grep": "search_files",
    "glob": "list_files",
    "ls": "list_files",
    "bash": "execute_command",
    "edit": "apply_diff",
    "multiedit": "apply_diff",
    "write": "write_file",
    "todowrite": "update_plan",
}
"""Claude Code's tool names (`.claude/agents/*.md`) and the Forge tool each stands for."""

MODE_ALIASES = {
    "plan": PermissionMode.READ_ONLY,
    "default": PermissionMode.ASK,
    "acceptedits": PermissionMode.ACCEPT_EDITS,
    "bypasspermissions": PermissionMode.AUTO,
}
"""Claude Code's `permissionMode` values and the Forge mode each is."""

INHERIT_MODELS = frozenset({"", "inherit", "sonnet", "opus", "haiku"})
"""`model` values that mean the parent's model (Claude Code's aliases name no model a
Forge server serves)."""


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """One subagent: how it is called, what it may do, and its system prompt."""

    name: str
    description: str
    prompt: str
    """The child's system prompt (the file's body)."""
    tools: tuple[str, ...] | None = None
    """Allowed tool names (`server__*` patterns allowed); None: every tool but `task`."""
    model: str = ""
    """The child's model; "" for the parent's (or the summarization model, below)."""
    provider: str = "main"
    """The server that answers the child: "main" or "summarization" (`PROVIDERS`)."""
    max_turns: int = DEFAULT_MAX_TURNS
    permission_mode: PermissionMode | None = None
    """The loosest mode the child may run in; None: the parent's."""
    path: Path | None = None
    """Where it was read from; None for a built-in."""
    scope: str = "built-in"
    """"project", "user" or "built-in"."""

    def allows(self, tool_name: str) -> bool:
        """Whether the child may use `tool_name` (never `task`)."""
        if tool_name == TASK_TOOL:
            return False
        if self.tools is None:
            return True
        return any(
            tool_name == entry or (entry.endswith("*") and tool_name.startswith(entry[:-1]))
            for entry in self.tools
        )


EXPLORE = AgentDefinition(
    name="explore",
    description=(
        "Read-only explorer: finds files, reads code and searches the workspace, then reports "
        "what it found. Use it for broad searches whose details the main conversation does "
        "not need."
    ),
    prompt=(
        "You are an explorer working for another agent. Find what you are asked about by "
        "listing, searching and reading files; you cannot change anything. When you have the "
        "answer, finish with `task_completion`: a concise report with the exact paths, line "
        "numbers and facts the other agent needs, and nothing it does not."
    ),
    tools=("read_file", "list_files", "search_files"),
    permission_mode=PermissionMode.READ_ONLY,
)
"""The built-in read-only agent."""

BUILT_IN: tuple[AgentDefinition, ...] = (EXPLORE,)


def project_agent_dirs(workspace: Path) -> tuple[Path, ...]:
    """The project's definitions: `.claude/agents` (read first) then `.forge/agents` (wins)."""
    return (
        workspace / ".claude" / AGENTS_DIRECTORY_NAME,
        workspace / ".forge" / AGENTS_DIRECTORY_NAME,
    )


def user_agents_dir() -> Path:
    """The user's definitions: `$XDG_CONFIG_HOME/forge/agents` (default `~/.config/...`)."""
    value = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(value) if value and os.path.isabs(value) else Path.home() / ".config"
    return base / "forge" / AGENTS_DIRECTORY_NAME


@dataclass(slots=True)
class AgentDefinitions:
    """The agents by name, and one line per file (or clash) that needs the user's attention."""

    agents: dict[str, AgentDefinition] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> AgentDefinition | None:
        """The agent called `name`, if any."""
        return self.agents.get(name.strip().lower())

    def names(self) -> list[str]:
        """The agents' names, sorted."""
        return sorted(self.agents)


class AgentFileError(ValueError):
    """A definition file that cannot be used; `str()` names the file and the field."""


def load_agent_definitions(
    workspace: Path,
    *,
    user_dir: Path | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
    built_in: Iterable[AgentDefinition] = BUILT_IN,
) -> AgentDefinitions:
    """The built-in agents, then the user's, then the project's (a later one of the same name
    wins, and the clash is reported); never raises."""
    result = AgentDefinitions()
    for definition in built_in:
        result.agents[definition.name] = definition
    user = user_dir if user_dir is not None else user_agents_dir()
    sources = [("user", user), *(("project", path) for path in project_agent_dirs(workspace))]
    for scope, directory in sources:
        for definition in _read_directory(directory, scope, result.problems, max_file_bytes):
            earlier = result.agents.get(definition.name)
            if earlier is not None:
                where = earlier.path if earlier.path is not None else "the built-in agent"
                result.problems.append(
                    f"{definition.path}: agent {definition.name!r} is also defined by {where}; "
                    f"the {scope} definition ({definition.path}) wins"
                )
            result.agents[definition.name] = definition
    return result


def _read_directory(
    directory: Path, scope: str, problems: list[str], max_file_bytes: int
) -> list[AgentDefinition]:
    try:
        if not directory.is_dir():
            return []
        paths = sorted(directory.glob("*.md"))
    except OSError as error:
        problems.append(f"{directory}: cannot list the agents: {error.strerror or error}")
        return []
    definitions = []
    for path in paths:
        try:
            definitions.append(read_agent_file(path, scope, max_file_bytes))
        except AgentFileError as error:
            problems.append(str(error))
    return definitions


def read_agent_file(
    path: Path, scope: str, max_file_bytes: int = MAX_FILE_BYTES
) -> AgentDefinition:
    """The definition in `path`; AgentFileError names the file and the field that is wrong."""
    import yaml  # here: the TUI imports this module's neighbours before its first frame

    try:
        with path.open("rb") as handle:  # never more than the cap plus one byte
            data = handle.read(max_file_bytes + 1)
        if len(data) > max_file_bytes:
            raise AgentFileError(
                f"{path}: larger than {max_file_bytes:,} bytes (agents.max_file_bytes); not loaded"
            )
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise AgentFileError(f"{path}: cannot read it: {reason}") from None
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise AgentFileError(f"{path}: no front matter (`---` lines with `name` and `description`)")
    try:
        loaded = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise AgentFileError(f"{path}: malformed front matter{where}") from None
    if not isinstance(loaded, dict):
        raise AgentFileError(f"{path}: the front matter must be `key: value` lines")
    meta = {str(key).replace("-", "_").lower(): value for key, value in loaded.items()}
    body = text[match.end() :].strip()
    if not body:
        raise AgentFileError(f"{path}: the body (the agent's system prompt) is empty")
    return AgentDefinition(
        name=_name(path, meta.get("name")),
        description=_text(path, meta, "description", required=True),
        prompt=body,
        tools=_tools(path, meta.get("tools")),
        model=_model(path, meta),
        provider=_provider(path, meta),
        max_turns=_max_turns(path, meta.get("max_turns", meta.get("maxturns"))),
        permission_mode=_mode(path, meta.get("permission_mode", meta.get("permissionmode"))),
        path=path,
        scope=scope,
    )


def _text(path: Path, meta: dict[str, object], key: str, *, required: bool = False) -> str:
    value = meta.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise AgentFileError(f"{path}: `{key}` is required in the front matter")
        return ""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise AgentFileError(f"{path}: `{key}` in the front matter must be text")
    return str(value).strip()


def _name(path: Path, value: object) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise AgentFileError(f"{path}: `name` is required in the front matter")
    name = str(value).strip().lower()
    if not isinstance(value, str) or not _NAME.match(name):
        raise AgentFileError(
            f"{path}: `name` {value!r} must be lower-case letters, digits, - and _ "
            "(it is typed after @agent-)"
        )
    return name


def _tools(path: Path, value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        entries = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        entries = [str(item).strip() for item in value]
    else:
        raise AgentFileError(f"{path}: `tools` must be a list of tool names")
    names = []
    for entry in entries:
        if not entry:
            continue
        mapped = CLAUDE_TOOL_NAMES.get(entry.lower(), entry) if entry[:1].isupper() else entry
        if mapped == TASK_TOOL:
            continue  # children cannot start children
        if mapped not in names:
            names.append(mapped)
    return tuple(names)


def _model(path: Path, meta: dict[str, object]) -> str:
    model = _text(path, meta, "model")
    return "" if model.lower() in INHERIT_MODELS else model


def _provider(path: Path, meta: dict[str, object]) -> str:
    provider = _text(path, meta, "provider").lower() or "main"
    if provider not in PROVIDERS:
        raise AgentFileError(
            f"{path}: `provider` {provider!r} must be one of {', '.join(PROVIDERS)}"
        )
    return provider


def _max_turns(path: Path, value: object) -> int:
    if value is None:
        return DEFAULT_MAX_TURNS
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise AgentFileError(f"{path}: `max_turns` must be a whole number of at least 1")
    return value


def _mode(path: Path, value: object) -> PermissionMode | None:
    if value is None:
        return None
    text = str(value).strip()
    if text in MODE_ALIASES or text.lower() in MODE_ALIASES:
        return MODE_ALIASES[text.lower()]
    try:
        return PermissionMode(text)
    except ValueError:
        names = ", ".join(mode.value for mode in PermissionMode)
        raise AgentFileError(f"{path}: `permission_mode` {text!r} is not one of {names}") from None
