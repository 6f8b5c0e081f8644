"""What a prompt starting with "/" does in an editor: Forge's commands answer as an agent
message (no model call); a custom command is expanded by the caller into a turn; an unknown
name is said, and nothing goes to the model."""

from __future__ import annotations

from typing import Protocol

from acp import update_agent_message_text
from acp.schema import StopReason

from forge.acp.commands import BUILTIN_NAMES, SlashInput, help_text
from forge.acp.open_session import OpenSession
from forge.acp.relay import TurnRelay
from forge.acp.updates import markdown_lines
from forge.agent.modes import MODE_NAMES, PermissionMode


class CommandHost(Protocol):
    """What the commands need of the agent (`forge.acp.agent.ForgeAcpAgent`)."""

    def switch_model(self, opened: OpenSession, model: str) -> str: ...

    async def announce_mode(self, opened: OpenSession) -> None: ...

    async def reload_commands(self, opened: OpenSession) -> None: ...

    async def announce_options(self, opened: OpenSession) -> None: ...


async def run_slash(
    agent: CommandHost, opened: OpenSession, slash: SlashInput, relay: TurnRelay
) -> StopReason | None:
    """Run a built-in command (its answer is sent); None for a custom command (the caller
    runs its turn); an unknown command is answered as such."""
    if slash.name not in BUILTIN_NAMES:
        if opened.custom.get(slash.name) is None:
            await agent.reload_commands(opened)  # a command file added since the start
        if opened.custom.get(slash.name) is not None:
            return None
        skills = opened.session.skill_commands(taken=[*BUILTIN_NAMES, *opened.custom.commands])
        if any(name == slash.name for name, _ in skills):
            return None  # a skill: the caller sends it (docs/adr/0046)
        await _say(relay, f"Unknown command /{slash.name}. /help lists Forge's commands.")
        return "end_turn"
    session = opened.session
    if slash.name == "help":
        await _say(relay, help_text(opened.custom))
    elif slash.name == "compact":
        async for event in session.compact(slash.argument):
            await relay.relay(event)
        report = session.reports.context()
        await _say(relay, f"Compacted: the prompt is {report.current_tokens} tokens now.")
    elif slash.name == "context":
        report = session.reports.context()
        await _say(
            relay,
            f"Context: {report.current_tokens} of {report.max_tokens} tokens "
            f"({len(report.messages)} messages; tool definitions {report.tool_tokens}). "
            f"Window: {report.window or 'unknown'}.",
        )
    elif slash.name == "cost":
        await _say(relay, _cost_text(opened))
    elif slash.name == "model":
        if not slash.argument:
            await _say(relay, f"Model: {session.settings.llm.model}. /model NAME switches.")
        else:
            changed = agent.switch_model(opened, slash.argument)
            await agent.announce_options(opened)
            await _say(relay, f"Switched ({changed}).")
    elif slash.name == "mode":
        await _mode(agent, opened, slash.argument, relay)
    elif slash.name == "sandbox":
        await _say(relay, "\n".join(session.reports.sandbox()))
    elif slash.name == "undo":
        outcome = session.history.undo()
        if outcome is None:
            await _say(relay, "Nothing to undo.")
        else:
            await _say(relay, outcome.text or "Nothing changed.")
    return "end_turn"


async def _mode(agent: CommandHost, opened: OpenSession, name: str, relay: TurnRelay) -> None:
    if name not in MODE_NAMES:
        current = opened.session.policy.mode.value
        await _say(relay, f"Mode: {current}. /mode takes one of {', '.join(MODE_NAMES)}.")
        return
    opened.session.set_mode(PermissionMode(name))
    await agent.announce_mode(opened)
    await _say(relay, f"Mode: {name}.")


def _cost_text(opened: OpenSession) -> str:
    report = opened.session.reports.cost()
    if not report.lines:
        return "No requests yet."
    lines = []
    for line in report.lines:
        dollars = "no price" if line.dollars is None else f"${line.dollars:.4f}"
        lines.append(
            f"{line.kind} {line.model}: {line.requests} requests, {line.prompt} prompt + "
            f"{line.output} output tokens, {dollars}"
        )
    total = report.dollars()
    lines.append(
        "Total: " + ("unknown (a model has no price)" if total is None else f"${total:.4f}")
    )
    return "\n".join(lines)


async def _say(relay: TurnRelay, text: str) -> None:
    await relay.channel.send(update_agent_message_text(markdown_lines(text) + "\n"))
