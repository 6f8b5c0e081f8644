"""Replay sessions: corpus trajectories with each message's part in the story, and the combined
multi-task session.

Definitions (issue "Benchmarks"): a **user instruction** is a trajectory's first user message
when it comes before any assistant message, and each "Next task: ..." message of the combined
session; a user message after the trajectory's first assistant message is a tool **observation**
(text-action agents send their tools' output that way). A converted file may mark a user message
`"kind": "instruction"` or `"kind": "observation"` (`bench/convert/`); marks, where a file has
them, replace the inference (Aider's later requests are instructions, its command output
observations). A **user message** is any user-role message that is not an observation. The
corpus's turn-ending tools (`finish`, `submit`) become `task_completion`, so Forge's default
exclusions apply to them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.corpus import CORPUS, load_trajectory
from forge.llm.messages import Message, ToolCall

TRAJECTORIES = CORPUS / "trajectories"
BENCH_CORPUS = Path(__file__).resolve().parent / "corpus"
"""The larger corpus kept in the repository (`bench/corpus/`, sources in its README)."""
SHARED = "shared"
"""The origin of the shared corpus's sessions (`../shared/corpus/trajectories/`)."""
TURN_ENDING_TOOLS = {"finish": "task_completion", "submit": "task_completion"}
"""Corpus tool names mapped to Forge's turn-ending tool."""
COMBINED = "combined"
NEXT_TASK = "Next task: "
DANGLING_RESULT = "Task marked as complete."
"""The result given to a trajectory's final tool call that the recording left unanswered."""
PATH_KEYS = frozenset(
    {"path", "file_path", "filepath", "filename", "file_name", "dir", "directory"}
)
"""Tool-call argument names that hold a path."""


@dataclass
class Session:
    """Messages to replay, with the indices of user instructions and tool observations."""

    name: str
    messages: list[Message]
    instructions: set[int] = field(default_factory=set)
    origin: str = ""
    """Where the session comes from: `shared`, `bench/corpus`, or the folder it was read from."""
    observations: set[int] = field(default_factory=set)
    """User messages that carry a tool's output (text-action agents)."""

    def user_messages(self) -> list[int]:
        """Indices of the user-role messages that are not observations, in order."""
        return [
            index
            for index, message in enumerate(self.messages)
            if message.role == "user" and index not in self.observations
        ]

    def is_tool_output(self, index: int) -> bool:
        """A tool result or an observation."""
        return self.messages[index].role == "tool" or index in self.observations


def _map_turn_ending(message: Message) -> Message:
    if not any(call.name in TURN_ENDING_TOOLS for call in message.tool_calls):
        return message
    calls = tuple(
        ToolCall(
            id=call.id, name=TURN_ENDING_TOOLS.get(call.name, call.name), arguments=call.arguments
        )
        for call in message.tool_calls
    )
    return Message(role=message.role, content=message.content, tool_calls=calls)


def _close_dangling_calls(messages: list[Message]) -> list[Message]:
    """Append a result for each tool call of the final assistant message that has none."""
    if not messages or messages[-1].role != "assistant" or not messages[-1].tool_calls:
        return messages
    results = [
        Message(role="tool", content=DANGLING_RESULT, tool_call_id=call.id, name=call.name)
        for call in messages[-1].tool_calls
    ]
    return [*messages, *results]


def annotate(
    name: str, messages: Sequence[Message], kinds: Sequence[str | None] | None = None
) -> Session:
    """A session from plain messages, finding its instruction and its observations (`kinds`,
    one per message, gives them where the file marked them: "instruction", "observation").

    Empty assistant messages (no content, no calls) are dropped: no agent can send one, and
    Forge refuses them."""
    marks = list(kinds) if kinds is not None else [None] * len(messages)
    pairs = [
        (m, mark)
        for m, mark in zip(messages, marks, strict=True)
        if m.role != "assistant" or m.content or m.tool_calls
    ]
    session = Session(name, [_map_turn_ending(message) for message, _ in pairs])
    if any(mark is not None for _, mark in pairs):
        for index, (message, mark) in enumerate(pairs):
            if message.role == "user" and mark == "instruction":
                session.instructions.add(index)
            elif message.role == "user" and mark == "observation":
                session.observations.add(index)
        return session
    seen_assistant = False
    seen_instruction = False
    for index, message in enumerate(session.messages):
        if message.role == "assistant":
            seen_assistant = True
        elif message.role == "user":
            if seen_assistant:
                session.observations.add(index)
            elif not seen_instruction:
                session.instructions.add(index)
                seen_instruction = True
    return session


def origin_of(path: Path) -> str:
    """`shared` for the shared corpus, `bench/corpus` for the repository's, else the folder."""
    folder = path.resolve().parent
    if folder == TRAJECTORIES.resolve():
        return SHARED
    if folder == BENCH_CORPUS.resolve():
        return "bench/corpus"
    return folder.name


def load_session(path: Path) -> Session:
    """One corpus trajectory as a session; `FileNotFoundError` if the file is missing."""
    if not path.is_file():
        raise FileNotFoundError(f"trajectory not found: {path}")
    records = json.loads(path.read_text(encoding="utf-8"))
    kinds = [record.get("kind") if isinstance(record, dict) else None for record in records]
    session = annotate(path.name.removesuffix(".messages.json"), load_trajectory(path), kinds)
    session.origin = origin_of(path)
    return session


def trajectory_files(directory: Path = TRAJECTORIES) -> list[Path]:
    """Every `*.messages.json` in the corpus, sorted; `FileNotFoundError` if there are none."""
    files = sorted(directory.glob("*.messages.json")) if directory.is_dir() else []
    if not files:
        raise FileNotFoundError(f"no trajectories in {directory} (the shared corpus is missing)")
    return files


def combine(sessions: Sequence[Session], name: str = COMBINED) -> Session:
    """All sessions back to back as one: the first keeps its system prompt and instruction;
    each later one loses its system prompt and starts with a "Next task: ..." user message
    (its own instruction prefixed, or a generic one when it has none)."""
    combined = Session(name, [], origin=COMBINED)
    for number, session in enumerate(sessions):
        messages = _close_dangling_calls(list(session.messages))
        first = True
        introduced = number == 0
        for index, message in enumerate(messages):
            if number > 0 and message.role == "system" and first:
                continue
            first = False
            if not introduced:
                introduced = True
                if index in session.instructions:
                    combined.instructions.add(len(combined.messages))
                    combined.messages.append(
                        Message(role="user", content=NEXT_TASK + message.content)
                    )
                    continue
                combined.instructions.add(len(combined.messages))
                combined.messages.append(
                    Message(
                        role="user",
                        content=f"{NEXT_TASK}carry on with the work recorded as {session.name}.",
                    )
                )
            position = len(combined.messages)
            if index in session.instructions:
                combined.instructions.add(position)
            if index in session.observations:
                combined.observations.add(position)
            combined.messages.append(message)
    return combined


def touched_paths(messages: Sequence[Message]) -> list[str]:
    """The distinct path-like arguments of the messages' tool calls, in order of first use."""
    paths: dict[str, None] = {}
    for message in messages:
        for call in message.tool_calls:
            try:
                arguments = json.loads(call.arguments or "{}")
            except json.JSONDecodeError:
                continue
            if not isinstance(arguments, dict):
                continue
            for key, value in arguments.items():
                if key in PATH_KEYS and isinstance(value, str) and value.strip():
                    paths.setdefault(value.strip(), None)
    return list(paths)
