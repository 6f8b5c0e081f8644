"""The tools that end the agent's turn: `ask_question`, `converse`, `task_completion`.

Their specs live here so the model sees them beside the others, but the agent loop acts on
them: it asks the user and feeds the answer back (ask_question), or ends the turn with the
text (converse, task_completion). Their `run` only checks the arguments and echoes them, with
the parts the loop needs in `metadata`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from pydantic import Field

from forge.agent.tools.arguments import ModelTool, ToolArguments, tool_schema
from forge.agent.tools.base import ToolContext, ToolError, ToolResult, first_line
from forge.llm.protocols import ToolSpec


class AskQuestionArgs(ToolArguments):
    """`ask_question`'s arguments."""

    question: str = Field(description="The question, in full.")
    suggestions: list[str] | None = Field(
        default=None, description="Likely answers the user can pick (optional)."
    )


class ConverseArgs(ToolArguments):
    """`converse`'s arguments."""

    message: str = Field(description="Your reply.")


class TaskCompletionArgs(ToolArguments):
    """`task_completion`'s arguments."""

    result: str = Field(description="Summary of the outcome.")


class AskQuestionTool(ModelTool[AskQuestionArgs]):
    """Asks the user a question; the loop supplies the answer as this call's result."""

    spec = ToolSpec(
        name="ask_question",
        description=(
            "Ask the user a question when you cannot continue without their decision or "
            "information. Offer likely answers as suggestions. The user's answer comes back "
            "as this tool's result."
        ),
        parameters=tool_schema(AskQuestionArgs),
    )
    arguments_model = AskQuestionArgs
    loop_breaking = True

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "ask_question: Which database should I use?"."""
        question = arguments.get("question")
        return f"ask_question: {first_line(question) if isinstance(question, str) else '?'}"

    async def run(self, args: AskQuestionArgs, context: ToolContext) -> ToolResult:
        """Echo the question; metadata holds "question" and "suggestions" (a list)."""
        question = _non_empty(args.question, "question")
        suggestions = [item for item in args.suggestions or [] if item.strip()]
        return ToolResult(
            content=question, metadata={"question": question, "suggestions": suggestions}
        )


_TextArgsT = TypeVar("_TextArgsT", ConverseArgs, TaskCompletionArgs)


class _TextEndingTool(ModelTool[_TextArgsT]):
    """A turn-ending tool with one required text argument, `argument`, echoed back."""

    argument: ClassVar[str]
    loop_breaking = True

    async def run(self, args: _TextArgsT, context: ToolContext) -> ToolResult:
        """Echo the argument; metadata holds it under its own name."""
        text = _non_empty(getattr(args, self.argument), self.argument)
        return ToolResult(content=text, metadata={self.argument: text})


class ConverseTool(_TextEndingTool[ConverseArgs]):
    """Replies to the user and ends the turn (a plain answer, no task to carry out).

    `run` echoes the message; metadata holds "message"."""

    spec = ToolSpec(
        name="converse",
        description=(
            "Reply to the user when the message needs an answer rather than work in the "
            "workspace (a greeting, a question about concepts). Ends your turn."
        ),
        parameters=tool_schema(ConverseArgs),
    )
    arguments_model = ConverseArgs
    argument = "message"


class TaskCompletionTool(_TextEndingTool[TaskCompletionArgs]):
    """Reports that the task is done, with a summary; ends the turn.

    `run` echoes the result; metadata holds "result"."""

    spec = ToolSpec(
        name="task_completion",
        description=(
            "Call when the task is complete (verified where possible), with a short summary "
            "of what you did and anything the user should know. Ends your turn."
        ),
        parameters=tool_schema(TaskCompletionArgs),
    )
    arguments_model = TaskCompletionArgs
    argument = "result"


def _non_empty(value: str, name: str) -> str:
    if not value.strip():
        raise ToolError(f"'{name}' must be non-empty text")
    return value
