"""Forge's settings: typed, validated, one docstring per field (shown in the settings screen).

Sources, highest first: constructor arguments, `FORGE_*` environment variables (`__` nests:
`FORGE_LLM__MODEL`), `OPENAI_API_KEY` / `OPENAI_BASE_URL`, the YAML config file, defaults.
`Settings()` alone never reads the file; `forge.config.store.load_settings` supplies it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    ConfigDict,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from forge.config.agent_settings import AgentsSettings
from forge.config.field_docs import DocumentedModel
from forge.config.hook_settings import HooksSettings
from forge.config.keys import deep_merge
from forge.config.prices import ModelPriceSettings
from forge.config.skill_settings import SkillsSettings

ENV_PREFIX = "FORGE_"
ENV_NESTED_DELIMITER = "__"
OPENAI_ENV_VARIABLES: Mapping[str, tuple[str, str]] = {
    "OPENAI_API_KEY": ("llm", "api_key"),
    "OPENAI_BASE_URL": ("llm", "base_url"),
}
"""Conventional variables other tools already set, mapped to the settings they fill."""

OPENAI_BASE_URL = "https://api.openai.com/v1"
"""The default base URL (OpenAI's API)."""
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
"""Anthropic's API, used with provider anthropic when no other base URL is set."""


def is_anthropic_url(url: str) -> bool:
    """Whether `url` points at a host on anthropic.com."""
    found = re.match(r"^https?://([^/:?#\s]+)", url.strip())
    host = found.group(1).lower() if found else ""
    return host == "anthropic.com" or host.endswith(".anthropic.com")


def default_base_url_for(provider: str, base_url: str) -> str:
    """`base_url`, or the API's default when it is empty or (for anthropic) OpenAI's default."""
    if provider == "anthropic" and base_url in ("", OPENAI_BASE_URL):
        return ANTHROPIC_BASE_URL
    return base_url or OPENAI_BASE_URL


MINIMUM_THINKING_BUDGET = 1024
"""The smallest extended-thinking budget the Messages API accepts."""

_HTTP_URL = re.compile(r"^https?://[^/\s?#]+(?:[/?#]\S*)?$")


def _in_unit_interval(value: float) -> float:
    if not 0 < value <= 1:
        raise ValueError("must be in (0, 1]")
    return value


def _positive_int(value: int) -> int:
    if value <= 0:
        raise ValueError("must be a positive whole number")
    return value


def _non_negative_int(value: int) -> int:
    if value < 0:
        raise ValueError("must be zero or more")
    return value


def _positive_seconds(value: float) -> float:
    if value <= 0:
        raise ValueError("must be a positive number of seconds")
    return value


def _at_least_three(value: int) -> int:
    if value < 3:
        raise ValueError("must be 3 or more (the newest 3 tool outputs are always kept)")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


Fraction = Annotated[float, AfterValidator(_in_unit_interval)]
PositiveCount = Annotated[int, AfterValidator(_positive_int)]
NonNegativeCount = Annotated[int, AfterValidator(_non_negative_int)]
Seconds = Annotated[float, AfterValidator(_positive_seconds)]
NonBlank = Annotated[str, AfterValidator(_not_blank)]
MaskKeep = Annotated[int, AfterValidator(_at_least_three)]

_SECTION_CONFIG = ConfigDict(extra="ignore", validate_default=True)
"""Every section: unknown keys ignored, defaults validated too. A section subclasses
`DocumentedModel` (not `BaseModel`), whose field docstrings become the descriptions the
settings screen shows, without pydantic's slow `use_attribute_docstrings` (docs/adr/0042)."""


class LLMSettings(DocumentedModel):
    """How Forge talks to the model: an OpenAI-compatible chat completions endpoint or the
    Anthropic Messages API."""

    model_config = _SECTION_CONFIG

    provider: Literal["openai", "anthropic"] = "openai"
    """API the server speaks: openai (any OpenAI-compatible server) or anthropic (the
    Messages API; picked by itself when the base URL is on anthropic.com)."""
    model: NonBlank = "gpt-4o-mini"
    """Model used for the conversation."""
    summarization_model: str = ""
    """Model used to summarize old context; empty means the same as `model`."""
    base_url: str = OPENAI_BASE_URL
    """Base URL of the API (also read from OPENAI_BASE_URL); with provider anthropic the
    OpenAI default stands for https://api.anthropic.com."""
    api_key: SecretStr = SecretStr("")
    """API key (also read from OPENAI_API_KEY, or ANTHROPIC_API_KEY for provider anthropic);
    prefer the environment to the file."""
    summarization_provider: Literal["", "openai", "anthropic"] = ""
    """API of the summarization model's server; empty means the same as `provider`."""
    summarization_base_url: str = ""
    """Base URL of the summarization model's server; empty means the same as `base_url`
    (or that API's default when the summarization provider differs)."""
    summarization_api_key: SecretStr = SecretStr("")
    """API key for the summarization server; empty means the main key when the server is
    the same, else that API's environment variable."""
    thinking_budget: NonNegativeCount = 0
    """Tokens of extended thinking per request with provider anthropic (0 = off, else at
    least 1024)."""
    cache_ttl: Literal["5m", "1h"] = "5m"
    """Lifetime of Anthropic prompt-cache entries: 5m, or 1h (writes cost more, reads stay
    cheap across longer pauses)."""
    request_timeout: Seconds = 120
    """Seconds to wait for a response before giving up on one request."""
    max_retries: NonNegativeCount = 4
    """Retries for rate limits, server errors and dropped connections (0 = none)."""
    tool_choice: Literal["auto", "required", ""] = "auto"
    """`tool_choice` sent whenever tools are offered ("" = never sent; some local servers,
    such as llama-cpp-python, emit tool calls only when it is sent). A server that rejects
    it is asked again without it."""
    vision: Literal["auto", "on", "off"] = "auto"
    """Whether the model takes images: auto (yes, unless the model is known not to), on or
    off (YAML's true/false accepted). Images for a model that does not take them are refused
    with an error before anything is sent."""

    @field_validator("vision", mode="before")
    @classmethod
    def _vision_accepts_yaml_booleans(cls, value: Any) -> Any:
        if isinstance(value, bool):  # YAML 1.1 reads on/off/true/false as booleans
            return "on" if value else "off"
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("base_url")
    @classmethod
    def _base_url_is_http(cls, value: str) -> str:
        if not _HTTP_URL.match(value.strip()):
            raise ValueError("must look like http(s)://host[:port][/path]")
        return value.strip()

    @field_validator("thinking_budget")
    @classmethod
    def _thinking_budget_is_off_or_enough(cls, value: int) -> int:
        if 0 < value < MINIMUM_THINKING_BUDGET:
            raise ValueError(f"must be 0 (off) or at least {MINIMUM_THINKING_BUDGET}")
        return value

    @field_validator("summarization_base_url")
    @classmethod
    def _summarization_base_url_is_http(cls, value: str) -> str:
        if value.strip() and not _HTTP_URL.match(value.strip()):
            raise ValueError("must look like http(s)://host[:port][/path], or be empty")
        return value.strip()

    @model_validator(mode="after")
    def _anthropic_base_url_picks_anthropic(self) -> LLMSettings:
        # A base URL on anthropic.com means the Messages API unless `provider` says otherwise.
        if "provider" not in self.model_fields_set and is_anthropic_url(self.base_url):
            self.provider = "anthropic"
        return self

    @property
    def effective_summarization_model(self) -> str:
        """The model summaries use: `summarization_model`, or `model` when that is empty."""
        return self.summarization_model.strip() or self.model

    @property
    def effective_base_url(self) -> str:
        """The main server's base URL: `base_url`, except that the OpenAI default stands for
        Anthropic's API with provider anthropic."""
        return default_base_url_for(self.provider, self.base_url)

    @property
    def effective_summarization_provider(self) -> Literal["openai", "anthropic"]:
        """The summarization server's API: `summarization_provider`, else `provider`."""
        return self.summarization_provider or self.provider

    @property
    def effective_summarization_base_url(self) -> str:
        """The summarization server's base URL (see `summarization_base_url`)."""
        if self.summarization_base_url:
            return self.summarization_base_url
        if self.effective_summarization_provider == self.provider:
            return self.effective_base_url
        return default_base_url_for(self.effective_summarization_provider, "")

    @property
    def separate_summarization_server(self) -> bool:
        """Whether summaries go to another server or API than the conversation."""
        return (
            self.effective_summarization_provider != self.provider
            or self.effective_summarization_base_url != self.effective_base_url
            or bool(self.summarization_api_key.get_secret_value())
        )


class SummarizerSettings(DocumentedModel):
    """The adaptive map-reduce summarizer used for long stretches of history."""

    model_config = _SECTION_CONFIG

    chunk_size: PositiveCount = 2048
    """Tokens per chunk in the map step."""
    chunk_overlap: NonNegativeCount = 200
    """Tokens shared between neighbouring chunks; must be less than `chunk_size`."""
    max_concurrent: PositiveCount = 5
    """Chunks of one document summarized at the same time (its share of
    `context.max_concurrent_summaries`, which limits all summary requests together)."""
    token_max: PositiveCount = 3000
    """Summaries longer than this (tokens) are collapsed again in the reduce step."""
    max_collapse_depth: PositiveCount = 10
    """Reduce rounds at most before the result is truncated."""

    @field_validator("chunk_overlap")
    @classmethod
    def _overlap_below_chunk_size(cls, value: int, info: ValidationInfo) -> int:
        chunk_size = info.data.get("chunk_size")
        if chunk_size is not None and value >= chunk_size:
            raise ValueError("must be less than summarizer.chunk_size")
        return value


class ContextSettings(DocumentedModel):
    """When and how Forge compacts the conversation to stay inside the model's window."""

    model_config = _SECTION_CONFIG

    max_tokens: PositiveCount | None = None
    """Context budget in tokens; empty (null) means the model's own window."""
    warning_threshold: Fraction = 0.85
    """Fraction of the budget at which the UI warns."""
    auto_summary_threshold: Fraction = 0.90
    """Fraction of the budget at which history is summarized automatically."""
    threshold_trigger: Fraction = 0.80
    """Fraction of the budget at which the threshold strategy starts summarizing."""
    messages_old_threshold: PositiveCount = 20
    """Messages after which a message counts as old enough to summarize."""
    min_tool_calls_to_summarize: PositiveCount = 10
    """Tool calls needed before the tool-call strategy summarizes them."""
    max_tool_call_distance: PositiveCount = 40
    """Messages back from the end beyond which a tool call may be summarized."""
    excluded_tools: list[str] = ["task_completion", "ask_question", "converse", "skill"]
    """Tools whose calls and results are never summarized away (a loaded skill's
    instructions stay: docs/adr/0046)."""
    goal_batch_age: PositiveCount = 20
    """Messages after which a finished goal's turns may be batched into one summary."""
    goal_batch_min_turns: PositiveCount = 2
    """Fewest turns the goal-batch strategy summarizes together."""
    goal_batch_max_turns: PositiveCount = 6
    """Most turns the goal-batch strategy summarizes together."""
    max_concurrent_summaries: PositiveCount = 5
    """Summarization requests in flight at the same time, all strategies and map-reduce steps
    together."""
    summary_request_timeout: Seconds = 30
    """Seconds to wait for one summarization request (shorter than llm.request_timeout: a
    slow summarizer must not hold up the agent)."""
    summary_max_retries: NonNegativeCount = 1
    """Retries for one failed summarization request (rate limits, server errors, timeouts)."""
    ingest_max_share: Fraction = 0.5
    """Largest share of the budget one tool output may take; above it, only its head and tail
    are kept, with the elided size and how to read the rest."""
    observation_masking: bool = True
    """Replace older tool outputs by a one-line placeholder (no LLM call)."""
    work_ledger: bool = True
    """Pin the work ledger (files changed, commands and their exit codes, test results, errors,
    abandoned approaches; built from the tool calls, no LLM call) after the first compaction."""
    mask_keep_recent: MaskKeep = 3
    """Newest tool outputs never masked (at least 3)."""
    mask_batch: PositiveCount = 3
    """Masking waits until this many outputs can be masked, then masks them at once, so the
    prompt's prefix changes rarely and providers' prompt caches keep hitting."""
    tool_call_summaries: bool = False
    """Summarize aging tool calls with the LLM (buffered, in parallel) instead of masking them.
    A call is summarized once `messages_old_threshold` messages follow it; when the prompt
    reaches `threshold_trigger` sooner (a small budget, large outputs), masking still shrinks
    it first, and few or no summaries are made."""
    user_instruction_share: Fraction = 0.5
    """Share of the budget your own messages may take verbatim; above it the oldest are
    condensed (every instruction kept), never dropped."""
    summarizer: SummarizerSettings = SummarizerSettings()
    """The map-reduce summarizer."""

    @field_validator("auto_summary_threshold")
    @classmethod
    def _auto_summary_not_below_warning(cls, value: float, info: ValidationInfo) -> float:
        warning = info.data.get("warning_threshold")
        if warning is not None and value < warning:
            raise ValueError("must be at least context.warning_threshold")
        return value

    @field_validator("goal_batch_max_turns")
    @classmethod
    def _max_turns_not_below_min(cls, value: int, info: ValidationInfo) -> int:
        minimum = info.data.get("goal_batch_min_turns")
        if minimum is not None and value < minimum:
            raise ValueError("must be at least context.goal_batch_min_turns")
        return value


class SandboxSettings(DocumentedModel):
    """The OS sandbox the model's commands run in (docs/adr/0053-command-sandbox.md)."""

    model_config = _SECTION_CONFIG

    mode: Literal["auto", "on", "off"] = "auto"
    """auto: confine the model's commands where the OS can (else run them as before, said
    once); on: refuse to run a command unconfined; off: no sandbox. YAML true/false mean
    on/off."""
    network: bool = False
    """Let confined commands reach the network (off: no network, not even the host's
    loopback; the session's commands share one private loopback)."""
    allow_unconfined: bool = False
    """In auto mode, let the model run a command outside the sandbox (it always asks in the
    other modes)."""
    auto_allow: bool = False
    """In ask mode, run confined commands without a dialog (unconfined ones still ask)."""
    deny_read: list[str] = []
    """More paths confined commands may not read (`~` allowed), besides ~/.ssh, ~/.aws,
    ~/.gnupg, ~/.config/gh, ~/.netrc and Forge's own directories."""
    max_processes: PositiveCount = 1024
    """Processes one session's confined commands may have at once (a pids cgroup, where
    Forge may create one)."""

    @field_validator("mode", mode="before")
    @classmethod
    def _yaml_booleans(cls, value: object) -> object:
        # YAML 1.1 reads a bare on/off (and true/false) as a boolean; the environment's
        # FORGE_TOOLS__SANDBOX__MODE=true/false means the same.
        if isinstance(value, bool):
            return "on" if value else "off"
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return "on" if value.strip().lower() == "true" else "off"
        return value


class WebFetchSettings(DocumentedModel):
    """Where `web_fetch` may go and how much it reads (docs/adr/0055)."""

    model_config = _SECTION_CONFIG

    allow_domains: list[str] = []
    """Domains fetched without asking (a name covers its subdomains, e.g. "python.org"); in
    read-only mode the only domains web_fetch may reach."""
    allow_private: bool = False
    """Allow requests to loopback, link-local and private addresses (off: refused, redirects
    and resolved addresses included)."""
    timeout: Seconds = 30
    """Seconds one fetch may take, redirects included."""
    max_download_bytes: PositiveCount = 5_000_000
    """Bytes read from a response at most; the text of what was read is returned, marked."""
    max_result_characters: PositiveCount = 60_000
    """Characters of page text returned at most; above it, head and tail with a marker."""


class ToolsSettings(DocumentedModel):
    """What the agent's tools may do without asking."""

    model_config = _SECTION_CONFIG

    auto_approve: list[str] = ["read_file", "list_files", "search_files"]
    """Tools that run without asking for approval."""
    command_allowlist: list[str] = []
    """Shell commands that run without approval, matched by prefix (e.g. "git status")."""
    command_timeout: Seconds = 120
    """Seconds a shell command may run before it is stopped."""
    max_background: PositiveCount = 4
    """Background commands (`execute_command` with `background: true`) running at once; one
    more is refused with an error naming this setting."""
    background_timeout: Seconds | None = None
    """Seconds after which a background command is stopped; none (the default): it runs until
    stopped or the session ends."""
    bang_to_conversation: bool = True
    """A `!command` typed in the prompt is added to the conversation (with its output) as a
    note the model sees next turn; false keeps it out of the conversation."""
    mode: Literal["read-only", "ask", "accept-edits", "auto"] = "ask"
    """Permission mode at start: read-only (no writes, no commands), ask, accept-edits (file
    edits approved, commands ask) or auto (everything approved). Cycled with Ctrl+T in the TUI."""
    hide_env: list[str] = []
    """Environment variables the model's commands never see (besides every provider key and
    Forge's own `FORGE_*` settings); your `!` commands and hooks keep them."""
    sandbox: SandboxSettings = SandboxSettings()
    """The OS sandbox of the model's commands."""
    web_fetch: WebFetchSettings = WebFetchSettings()
    """The `web_fetch` tool: auto-approved domains, the private-address guard, limits."""


class CheckpointSettings(DocumentedModel):
    """The file states kept so /undo and /rewind can restore them (docs/adr/0027)."""

    model_config = _SECTION_CONFIG

    max_bytes: PositiveCount = 64 * 1024 * 1024
    """Bytes of earlier file contents kept per session; the oldest turns are dropped first."""


class TrustSettings(DocumentedModel):
    """What a trusted workspace's own definitions (`.forge/mcp.yaml`) may receive
    (docs/adr/0034; an untrusted workspace runs none of them)."""

    model_config = _SECTION_CONFIG

    env_allowlist: list[str] = []
    """Environment variables a trusted workspace's `${VAR}` references may read (e.g.
    "GITHUB_TOKEN"); any other reference is left empty. Your own config.yaml is not limited."""
    load_other_workspace_sessions: bool = False
    """Whether an editor (`forge acp`'s `session/load`) may open a session recorded in another
    workspace in the one it names; refused by default (that session's history and files
    would be replayed into this workspace)."""


class McpSettings(DocumentedModel):
    """Bounds on what MCP servers send (docs/adr/0036)."""

    model_config = _SECTION_CONFIG

    max_tool_schema_bytes: PositiveCount = 32 * 1024
    """Bytes of one MCP tool's definition (name, description, input schema as JSON); a larger
    tool is left out with a notice, so no server can fill the context with one definition."""
    stderr_tail_bytes: PositiveCount = 64 * 1024
    """Bytes of a stdio MCP server's stderr kept (the newest); older output is dropped."""
    defer_tools: Literal["auto", "always", "never"] = "auto"
    """Send MCP tools' definitions only once the model loads them with `tool_search`:
    "auto" when all of them together pass `defer_threshold`, "always", or "never"; decided
    at a session's first request and kept for the session (docs/adr/0054)."""
    defer_threshold: Fraction = 0.10
    """With `defer_tools: auto`, the share of the context window (`context.max_tokens` when
    set) the MCP tool definitions may take before they are deferred."""


class CommandsSettings(DocumentedModel):
    """Custom slash commands read from `.forge/commands/` and the user's commands folder."""

    model_config = _SECTION_CONFIG

    max_file_bytes: PositiveCount = 256 * 1024
    """Bytes of one custom command file; a larger file is refused, naming it (docs/adr/0036)."""


class UISettings(DocumentedModel):
    """The look of the terminal UI."""

    model_config = _SECTION_CONFIG

    show_reasoning: bool = True
    """Show the model's reasoning as it streams."""
    theme: NonBlank = "textual-dark"
    """Textual theme name."""
    notify: Literal["off", "bell", "desktop"] = "bell"
    """When a turn ends or waits for approval: nothing, a terminal bell, or the bell plus a
    desktop notice (OSC 9/777) while the terminal says it is not focused (docs/adr/0049)."""

    @field_validator("notify", mode="before")
    @classmethod
    def _notify_from_yaml(cls, value: object) -> object:
        # YAML 1.1 reads an unquoted `off` as false (and `on` as true).
        if value is False:
            return "off"
        if value is True:
            return "bell"
        return value


class McpServerSettings(DocumentedModel):
    """One MCP server: `command` (+ `args`, `env`) runs it over stdio, `url` (+ `headers`)
    reaches it over streamable HTTP. `${VAR}` in `env` and `headers` values is read from the
    environment when Forge connects (the file keeps the reference, never the secret)."""

    model_config = _SECTION_CONFIG

    command: str = ""
    """Program that runs a stdio server, e.g. "npx"."""
    args: list[str] = []
    """Its arguments."""
    env: dict[str, str] = {}
    """Environment variables for the server process (values may hold `${VAR}`)."""
    url: str = ""
    """Endpoint of a streamable-HTTP server, e.g. "http://127.0.0.1:8000/mcp"."""
    headers: dict[str, str] = {}
    """HTTP headers sent to it (values may hold `${VAR}`, e.g. "Bearer ${TOKEN}")."""
    enabled: bool = True
    """Connect to this server (false keeps the entry but leaves the server off)."""
    timeout: Seconds = 60
    """Seconds one tool call may take before it is cancelled."""
    startup_timeout: Seconds = 30
    """Seconds the server may take to start and list its tools."""
    sandbox: bool = False
    """Run this stdio server in the command sandbox (workspace writable, secrets hidden, no
    network unless `tools.sandbox.network`; docs/adr/0053)."""

    @field_validator("url")
    @classmethod
    def _url_is_http(cls, value: str) -> str:
        if value.strip() and not _HTTP_URL.match(value.strip()):
            raise ValueError("must look like http(s)://host[:port][/path]")
        return value.strip()

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if bool(self.command.strip()) == bool(self.url):
            raise ValueError("give either `command` (stdio) or `url` (streamable HTTP)")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """ "stdio" for a `command`, "http" for a `url`."""
        return "stdio" if self.command.strip() else "http"


@dataclass(frozen=True)
class _SourceInputs:
    """What the next `Settings()` built in this context reads besides its arguments."""

    file_data: Mapping[str, Any] = field(default_factory=dict)
    include_environment: bool = True
    environment_data: Mapping[str, Any] | None = None


_source_inputs: ContextVar[_SourceInputs] = ContextVar("forge_settings_sources")


@contextmanager
def settings_sources(
    file_data: Mapping[str, Any],
    *,
    include_environment: bool = True,
    environment_data: Mapping[str, Any] | None = None,
) -> Iterator[None]:
    """Within this block, `Settings()` layers `file_data` under the environment.

    With `include_environment=False` the environment is ignored. With `environment_data`, that
    mapping (already read from the environment, see `forge.config.environment`) stands in for
    the `FORGE_*` and `OPENAI_*` variables, so a loader can leave out a variable it found bad.
    """
    inputs = _SourceInputs(file_data, include_environment, environment_data)
    token = _source_inputs.set(inputs)
    try:
        yield
    finally:
        _source_inputs.reset(token)


class Settings(DocumentedModel):
    """All of Forge's settings. Sections mirror the YAML file's top-level keys.

    `Settings(**values)` layers `values` over the environment over the file given by
    `settings_sources` (none by default) over the defaults; `model_validate` takes its data
    alone.
    """

    model_config = _SECTION_CONFIG

    llm: LLMSettings = LLMSettings()
    """The model endpoint."""
    context: ContextSettings = ContextSettings()
    """Context management."""
    tools: ToolsSettings = ToolsSettings()
    """Tool approval and limits."""
    ui: UISettings = UISettings()
    """The terminal UI."""
    checkpoints: CheckpointSettings = CheckpointSettings()
    """File checkpoints for /undo and /rewind."""
    trust: TrustSettings = TrustSettings()
    """Workspace trust: what a trusted workspace's own server definitions may read."""
    mcp_servers: dict[str, McpServerSettings] = {}
    """MCP servers whose tools the agent may use, by name (see `.forge/mcp.yaml` too)."""
    mcp: McpSettings = McpSettings()
    """Bounds on what MCP servers send."""
    commands: CommandsSettings = CommandsSettings()
    """Custom slash commands."""
    prices: dict[str, ModelPriceSettings] = {}
    """Model prices in USD per million tokens (`input`, `cached_input`, `output`), by model
    name; added to (or replacing entries of) the built-in table in `forge.config.prices`."""
    hooks: HooksSettings = HooksSettings()
    """Lifecycle hooks: commands run before and after tool calls, prompts and turns."""
    agents: AgentsSettings = AgentsSettings()
    """Subagents run by the `task` tool (docs/adr/0045)."""
    skills: SkillsSettings = SkillsSettings()
    """Skills (agentskills.io `SKILL.md` folders): the size cap and the disabled ones."""

    def __init__(self, **values: Any) -> None:
        super().__init__(**_layered_sources(values))


def _layered_sources(values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` over the environment over the file (`settings_sources`), merged section by
    section: a mapping merges key by key, any other value replaces the one below."""
    inputs = _source_inputs.get(_SourceInputs())
    layers: list[Mapping[str, Any]] = [_known_sections(inputs.file_data)]
    if inputs.include_environment and inputs.environment_data is not None:
        layers.append(_known_sections(inputs.environment_data))
    elif inputs.include_environment:
        layers.append(environment_values())
    merged: dict[str, Any] = {}
    for layer in [*layers, values]:
        merged = deep_merge(merged, layer)
    return merged


def _known_sections(data: Mapping[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in data.items() if name in Settings.model_fields}


def forge_variables() -> list[str]:
    """The names of the `FORGE_*` variables that can hold a setting (not `FORGE_CONFIG`)."""
    sections = {name.upper() for name in Settings.model_fields}
    names = []
    for name in sorted(os.environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX):
            continue
        head = upper[len(ENV_PREFIX) :].split(ENV_NESTED_DELIMITER, 1)[0]
        if head in sections:
            names.append(name)
    return names


def openai_values() -> dict[str, Any]:
    """The settings `OPENAI_API_KEY` and `OPENAI_BASE_URL` fill; empty values count as unset."""
    values: dict[str, Any] = {}
    for variable, (section, key) in OPENAI_ENV_VARIABLES.items():
        value = os.environ.get(variable, "")
        if value:
            values.setdefault(section, {})[key] = value
    return values


def environment_values() -> dict[str, Any]:
    """What `Settings()` reads from the environment: the `OPENAI_*` variables under the
    `FORGE_*` ones. Raises pydantic-settings' SettingsError for a `FORGE_*` value it cannot
    decode (`forge.config.environment.read_environment` reports it instead). pydantic-settings
    is imported only when a `FORGE_*` variable is set."""
    values = openai_values()
    if forge_variables():
        from forge.config.environment_decoding import forge_values

        values = deep_merge(values, forge_values(Settings, ENV_PREFIX, ENV_NESTED_DELIMITER))
    return values
