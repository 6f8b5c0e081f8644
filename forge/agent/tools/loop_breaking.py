"""The tools that end the agent's turn: `ask_question`, `converse`, `task_completion`.

Their specs live here so the model sees them beside the others, but the agent loop acts on
them: it asks the user and feeds the answer back (ask_question), or ends the turn with the
text (converse, task_completion). Their `run` only checks the arguments and echoes them, with
the parts the loop needs in `metadata`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from forge.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, first_line
from forge.llm.protocols import ToolSpec


class AskQuestionTool(Tool):
    """Asks the user a question; the loop supplies the answer as this call's result."""

    spec = ToolSpec(
        name="ask_question",
        description=(
            "Ask the user a question when you cannot continue without their decision or "
            "information. Offer likely answers as suggestions. The user's answer comes back "
            "as this tool's result."
        ),
        parameters={
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question, in full."},
                "suggestions": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Likely answers the user can pick (optional).",
                },
            },
            "required": ["question"],
        },
    )
    loop_breaking = True

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "ask_question: Which database should I use?"."""
        question = arguments.get("question")
        return f"ask_question: {first_line(question) if isinstance(question, str) else '?'}"

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        """Echo the question; metadata holds "question" and "suggestions" (a list)."""
        question = _non_empty(arguments, "question")
        suggestions = [item for item in arguments.get("suggestions") or [] if item.strip()]
        return ToolResult(
            content=question, metadata={"question": question, "suggestions": suggestions}
        )


class _TextEndingTool(Tool):
    """A turn-ending tool with one required text argument, `argument`, echoed back."""

    argument: ClassVar[str]
    loop_breaking = True

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        """Echo the argument; metadata holds it under its own name."""
        text = _non_empty(arguments, self.argument)
        return ToolResult(content=text, metadata={self.argument: text})


def _one_text_parameter(name: str, description: str) -> dict[str, Any]:
    """The JSON schema of an object with one required string property."""
    return {
        "type": "object",
        "properties": {name: {"type": "string", "description": description}},
        "required": [name],
    }


class ConverseTool(_TextEndingTool):
    """Replies to the user and ends the turn (a plain answer, no task to carry out).

    `run` echoes the message; metadata holds "message"."""

    spec = ToolSpec(
        name="converse",
        description=(
            "Reply to the user when the message needs an answer rather than work in the "
            "workspace (a greeting, a question about concepts). Ends your turn."
        ),
        parameters=_one_text_parameter("message", "Your reply."),
    )
    argument = "message"


class TaskCompletionTool(_TextEndingTool):
    """Reports that the task is done, with a summary; ends the turn.

    `run` echoes the result; metadata holds "result"."""

    spec = ToolSpec(
        name="task_completion",
        description=(
            "Call when the task is complete (verified where possible), with a short summary "
            "of what you did and anything the user should know. Ends your turn."
        ),
        parameters=_one_text_parameter("result", "Summary of the outcome."),
    )
    argument = "result"


def _non_empty(arguments: Mapping[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ToolError(f"'{name}' must be non-empty text")
    return value
