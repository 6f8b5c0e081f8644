"""What every tool is made of: its result, its context, its error, and the `Tool` base class.

A tool is a small object with a JSON-schema `spec` the model sees (native OpenAI function
calling), `parse_arguments` that checks a call's arguments (the built-in tools' are pydantic
models, `forge.agent.tools.arguments`), an async `run` that does the work with them, and two
cheap, side-effect-free views of a call for people: `describe` (one line) and `preview` (the
diff or the full command an approval dialog shows). Errors the model should read are raised as
`ToolError`; the registry turns them into an error `ToolResult`, so a bad call never ends a
turn.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from forge.llm.image_parts import ImagePart
from forge.llm.protocols import ToolSpec

if TYPE_CHECKING:  # the sandbox pulls in the settings (pydantic): not at the TUI's start
    from forge.agent.sandbox.sandbox import CommandSandbox
    from forge.agent.tools.background import BackgroundCommands


class ToolError(Exception):
    """A failure the model should read and can act on; its message becomes the tool result."""


@dataclass(slots=True)
class ToolResult:
    """What a tool call produced.

    `content` is the text the model reads. `is_error` marks failures (and non-zero exit codes)
    for display. `exit_code` is set by `execute_command`. `metadata` carries detail for people,
    never for the model: {"diff": unified diff} for edits, {"path": workspace-relative path}.
    `images` go to the model with the text (`read_file` on an image, an MCP image result).
    """

    content: str
    is_error: bool = False
    exit_code: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    images: tuple[ImagePart, ...] = ()


class FileChangeRecorder(Protocol):
    """Told around every file change a tool makes (the checkpoint store, ADR 0027)."""

    def before_change(self, path: Path) -> None:
        """`path` (resolved, inside the workspace) is about to change: keep its state now."""
        ...

    def after_change(self, path: Path) -> None:
        """`path` was written: remember what Forge left there."""
        ...


@dataclass(slots=True)
class ToolContext:
    """Where and how a tool call runs.

    `workspace` is the directory file tools are confined to and commands run in.
    `on_output` receives a running command's output as it arrives (for live display).
    `command_timeout` is the default limit in seconds for `execute_command`.
    `changes`, when set, is told before and after every file a tool writes (checkpoints).
    `sandbox`, when set, confines the model's commands (docs/adr/0053); the user's `!`
    commands have none. `unconfined_approved`: the user allowed this call to run outside it.
    `background`: the session's background commands (`execute_command` with `background:
    true`, `command_output`, `command_stop`; docs/adr/0057); None where there are none.
    """

    workspace: Path
    on_output: Callable[[str], None] | None = None
    command_timeout: float = 120
    changes: FileChangeRecorder | None = None
    sandbox: CommandSandbox | None = None
    unconfined_approved: bool = False
    background: BackgroundCommands | None = None


ArgsT = TypeVar("ArgsT")


class Tool(ABC, Generic[ArgsT]):
    """A function the model may call, with arguments of type `ArgsT` once checked.

    Subclasses set `spec` (name, description, JSON schema of the arguments) and implement
    `parse_arguments` and `run` (the built-in tools derive from `ModelTool`, whose arguments
    are a pydantic model the schema is generated from). `mutates` is true for tools that write
    files or run commands: the approval policy asks the user before running them unless told
    otherwise. `loop_breaking` is true for the tools that end the agent's turn (`ask_question`,
    `converse`, `task_completion`); the loop handles those itself.
    """

    spec: ClassVar[ToolSpec]
    mutates: ClassVar[bool] = False
    loop_breaking: ClassVar[bool] = False

    @property
    def name(self) -> str:
        """The tool's name, as the model calls it."""
        return self.spec.name

    @abstractmethod
    def parse_arguments(self, arguments: dict[str, Any]) -> ArgsT:
        """The call's arguments checked against `spec`; `ToolError` names every problem on
        one line ("invalid arguments for read_file: missing required argument 'path'")."""

    @abstractmethod
    async def run(self, args: ArgsT, context: ToolContext) -> ToolResult:
        """Do the work with `args` from `parse_arguments`; raise `ToolError` on failure."""

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """One readable line for approval dialogs and tool blocks, e.g. "read_file: a.py".

        Never raises, whatever the arguments: it is shown before they are validated.
        """
        for value in arguments.values():
            if isinstance(value, str) and value:
                return f"{self.name}: {first_line(value)}"
        return self.name

    def preview(self, arguments: Mapping[str, Any], context: ToolContext) -> str:
        """What running the call would do, computed without doing it (a diff, a command).

        Never raises and never changes anything; the default is `describe`.
        """
        return self.describe(arguments)

    def refusal(self, arguments: Mapping[str, Any], context: ToolContext) -> str | None:
        """Why the call will fail whatever the user answers (e.g. a write to a file the model
        has not read), computed without doing anything; None when it may run. A call with a
        refusal is not put to the user for approval. Never raises; the default is None."""
        return None


def first_line(text: str, limit: int = 120) -> str:
    """The first line of `text`, shortened to `limit` characters, marked if anything was cut."""
    line, _, rest = text.partition("\n")
    if len(line) > limit:
        return line[: limit - 1] + "…"
    return line + (" …" if rest else "")
