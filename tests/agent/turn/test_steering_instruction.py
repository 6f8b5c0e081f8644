"""A steered message is a user instruction to the context engine (issue 40): kept verbatim
and protected like any message the user typed, never summarized as history."""

from __future__ import annotations

from forge.agent.turn.steering import Steering
from forge.context.conversation import Conversation
from forge.context.groups import is_instruction, protected_positions
from forge.llm.messages import Message


def test_a_steered_message_is_an_instruction_and_protected() -> None:
    conversation = Conversation()
    conversation.append(Message(role="system", content="You are Forge."))
    conversation.append(Message(role="user", content="fix the tests"))
    steering = Steering()
    steering.add("use the v2 API instead")
    [added] = steering.add_to(conversation)
    steered = conversation.messages[-1]
    assert steered.id == added.message_id and steered.content == "use the v2 API instead"
    assert is_instruction(steered)
    assert len(conversation.messages) - 1 in protected_positions(conversation.messages, ())
