"""ImageMaskingStrategy: the images of older user messages become one-line placeholders.

An image costs hundreds to thousands of tokens on every request; once the user has moved on
it is rarely looked at again. The images of a user message older than the newest
`KEEP_USER_TURNS` user messages are masked in place (forced, as by /compact: all but the
newest's): the message keeps its id, text and image names, each image loses its bytes and is
sent as `[image NAME masked to save context; recall KEY]`, and `recall KEY` gives the original
message back with its images as images (docs/adr/0055, part 2). A tool's images are masked
with its output by observation masking. Nothing is summarized as text; the summarizer reads
only the images' names (`forge.context.transcript`).

Off with `context.observation_masking: false`. The check is O(new messages) per call: user
messages with images are noted as they arrive.
"""

from __future__ import annotations

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.recall import recall_key
from forge.context.strategies.contract import Capabilities
from forge.context.strategies.deterministic import AppendCursor, DeterministicStrategy
from forge.llm.messages import Message, MessageKind
from forge.llm.protocols import TokenCounter

IMAGE_MASKING = "image_masking"
KEEP_USER_TURNS = 2
"""The newest user messages whose images are sent as they are."""


def _has_live_images(message: Message) -> bool:
    return any(not image.masked for image in message.images)


def _is_user(message: Message) -> bool:
    return message.role == "user" and message.kind is MessageKind.NORMAL


class ImageMaskingStrategy(DeterministicStrategy):
    """Masks the images of older user messages (see the module docstring)."""

    name = IMAGE_MASKING
    capabilities = Capabilities(in_place=True)

    def __init__(self, settings: ContextSettings, counter: TokenCounter) -> None:
        super().__init__(settings, counter)
        self._cursor = AppendCursor(relevant=_has_live_images)
        self._users: list[tuple[int, str]] = []
        """(position, id) of every user message, in order."""
        self._with_images: list[tuple[int, str]] = []
        """(position, id) of the user messages whose images are not masked yet."""

    def _scan(self, conversation: Conversation) -> None:
        restarted, fresh = self._cursor.new_messages(conversation)
        start = 0 if restarted else len(conversation) - len(fresh)
        if restarted:
            self._users, self._with_images = [], []
        for offset, message in enumerate(fresh):
            if _is_user(message):
                self._users.append((start + offset, message.id))
                if _has_live_images(message):
                    self._with_images.append((start + offset, message.id))

    def _old(self, conversation: Conversation, *, force: bool) -> list[tuple[int, str]]:
        if not self.settings.observation_masking:
            return []
        self._scan(conversation)
        keep = 1 if force else KEEP_USER_TURNS
        if len(self._users) <= keep:
            return []
        first_kept = self._users[-keep][0]
        return [
            (position, message_id)
            for position, message_id in self._with_images
            if position < first_kept
            and position < len(conversation)
            and conversation[position].id == message_id
        ]

    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """A user message with images is no longer among the newest `KEEP_USER_TURNS`."""
        return bool(self._old(conversation, force=False))

    def pending_items(
        self, conversation: Conversation, max_tokens: int, *, force: bool = False
    ) -> int:
        """Messages whose images a run now would mask."""
        return len(self._old(conversation, force=force))

    def apply(self, conversation: Conversation, max_tokens: int, *, force: bool = False) -> int:
        """Mask the old messages' images in place; returns how many messages changed."""
        old = self._old(conversation, force=force)
        for position, _ in old:
            message = conversation[position]
            key = recall_key(message)
            images = tuple(image.masked_by(key) for image in message.images)
            conversation.replace_message(position, message.evolve(images=images))
        done = {message_id for _, message_id in old}
        self._with_images = [entry for entry in self._with_images if entry[1] not in done]
        self._cursor.new_messages(conversation)  # our own edits are not news
        return len(old)
