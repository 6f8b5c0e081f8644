"""`ToolRegistry`: the tools the model may call, and the one safe way to run a call.

The agent loop uses it like this::

    registry = default_registry()
    reply = provider.stream(messages, registry.specs())
    ...
    try:
        prepared = registry.prepare(call)      # unknown tool / bad JSON / missing args
    except ToolError as error:
        result = ToolResult(content=str(error), is_error=True)
    else:
        # policy.decide(call, prepared.tool); prepared.tool.describe(prepared.arguments) and
        # .preview(prepared.arguments, context) for the approval dialog; loop-breaking tools
        # (prepared.tool.loop_breaking) are handled by the loop itself.
        result = await registry.execute(call, context)

`prepare` checks the arguments with the tool's `parse_arguments` (a built-in tool's pydantic
model, an MCP tool's server schema): `prepared.args` is what `run` takes, and
`prepared.arguments` the same as a plain dict for the views (describe, preview, refusal).

`execute` never raises for a bad call or a failing tool — the model reads an error result and
can correct itself. Only cancellation (`asyncio.CancelledError`) propagates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from forge.agent.tools.apply_diff import ApplyDiffTool
from forge.agent.tools.base import Tool, ToolContext, ToolError, ToolResult
from forge.agent.tools.execute_command import ExecuteCommandTool
from forge.agent.tools.list_files import ListFilesTool
from forge.agent.tools.loop_breaking import AskQuestionTool, ConverseTool, TaskCompletionTool
from forge.agent.tools.read_file import ReadFileTool
from forge.agent.tools.read_ledger import FileReadLedger
from forge.agent.tools.search_files import SearchFilesTool
from forge.agent.tools.update_plan import UpdatePlanTool
from forge.agent.tools.workspace import ReadableRoots
from forge.agent.tools.write_file import WriteFileTool
from forge.llm.messages import ToolCall
from forge.llm.protocols import ToolSpec


@dataclass(frozen=True, slots=True)
class PreparedCall:
    """A tool call whose tool exists and whose arguments passed the tool's check.

    `args` is what the tool's `run` takes (a built-in tool's arguments model); `arguments` is
    the same as a plain dict (a null optional argument left out) for `describe`, `preview`,
    `refusal` and the protected-write check."""

    call: ToolCall
    tool: Tool[Any]
    arguments: dict[str, Any]
    args: Any


class ToolSource(Protocol):
    """Tools that come and go while a session runs (an MCP server's)."""

    def tools(self) -> Sequence[Tool]:
        """The tools available right now."""
        ...

    # Optional: `explain_missing(name) -> str | None`, why a tool the source knows of is not
    # available now; `ToolRegistry.get` raises it instead of "unknown tool".


class ToolRegistry:
    """Tools by name, in the order they were registered (the order the model sees them),
    then the tools of each added source as they are at the moment."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        """A registry holding `tools`; names must be unique."""
        self._tools: dict[str, Tool] = {}
        self._sources: list[ToolSource] = []
        for tool in tools:
            self.register(tool)

    def add_source(self, source: ToolSource) -> None:
        """Offer `source`'s tools too, read afresh on every lookup; a name a registered tool
        (or an earlier source) already has is skipped."""
        self._sources.append(source)

    def _all(self) -> dict[str, Tool]:
        if not self._sources:
            return self._tools
        tools = dict(self._tools)
        for source in self._sources:
            for tool in source.tools():
                tools.setdefault(tool.name, tool)
        return tools

    def register(self, tool: Tool) -> None:
        """Add a tool; `ValueError` if one with its name is already registered."""
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def read_ledger(self) -> FileReadLedger | None:
        """The ledger the registered file tools share (what the model has read), if any."""
        for tool in self._tools.values():
            ledger = getattr(tool, "ledger", None)
            if isinstance(ledger, FileReadLedger):
                return ledger
        return None

    def names(self) -> list[str]:
        """The registered tool names."""
        return list(self._all())

    def specs(self) -> list[ToolSpec]:
        """The specs to send to the provider with every request; a source's tools it names
        in `natively_deferred()` are marked `defer_loading` (Anthropic's own tool search)."""
        deferred: set[str] = set()
        for source in self._sources:
            names = getattr(source, "natively_deferred", None)
            if names is not None:
                deferred |= names()
        return [
            dataclasses.replace(tool.spec, defer_loading=True) if name in deferred else tool.spec
            for name, tool in self._all().items()
        ]

    def get(self, name: str) -> Tool:
        """The tool called `name`; `ToolError` ("unknown tool X; available: ...") if none."""
        tools = self._all()
        tool = tools.get(name)
        if tool is None:
            for source in self._sources:
                # A source may know the name (an MCP server that is down says so and why).
                explain = getattr(source, "explain_missing", None)
                reason = explain(name) if explain is not None else None
                if reason:
                    raise ToolError(reason)
            available = ", ".join(tools)
            raise ToolError(f"unknown tool {name!r}; available: {available}")
        return tool

    def prepare(self, call: ToolCall) -> PreparedCall:
        """Look up the tool and parse and check the arguments; `ToolError` says what is wrong."""
        tool = self.get(call.name)
        try:
            raw = call.parsed_arguments()
        except ValueError as error:
            raise ToolError(f"{call.name}: {error}") from None
        args = tool.parse_arguments(raw)
        return PreparedCall(call=call, tool=tool, arguments=_as_dict(args), args=args)

    async def execute(self, call: ToolCall, context: ToolContext) -> ToolResult:
        """Run one call. Every failure becomes an error result the model can read."""
        try:
            prepared = self.prepare(call)
            return await prepared.tool.run(prepared.args, context)
        except ToolError as error:
            return ToolResult(content=str(error), is_error=True)
        except Exception as error:
            # A tool bug or an unexpected OS error must not end the turn; the model sees what
            # happened and the display keeps the exception type.
            return ToolResult(
                content=f"{call.name} failed: {type(error).__name__}: {error}",
                is_error=True,
                metadata={"exception": type(error).__name__},
            )


def _as_dict(args: Any) -> dict[str, Any]:
    if isinstance(args, BaseModel):
        return args.model_dump(exclude_none=True)
    return dict(args)


def default_registry(readable: ReadableRoots | None = None) -> ToolRegistry:
    """A registry with every built-in tool: file tools, search, commands, loop-breaking tools,
    and `update_plan`.

    The file tools share one `FileReadLedger`: the registry of a session is its memory of
    what the model has read. `readable`: folders outside the workspace `read_file` and
    `list_files` may read too (the loaded skills', docs/adr/0046).
    """
    ledger = FileReadLedger()
    return ToolRegistry(
        [
            ReadFileTool(ledger, readable),
            WriteFileTool(ledger),
            ApplyDiffTool(ledger),
            ListFilesTool(readable),
            SearchFilesTool(),
            ExecuteCommandTool(),
            UpdatePlanTool(),
            AskQuestionTool(),
            ConverseTool(),
            TaskCompletionTool(),
        ]
    )
