"""Whether the model takes images: `llm.vision` (auto, on, off) and, for auto, a short list of
model families known to take text only (docs/adr/0055, part 2).

Auto says yes unless the model's name is known to be text-only: an unknown local model may
well take images, and a server that does not will say so in its error. A refused image is an
error the user reads before anything is sent, never a silent drop.

Core code: no UI, no I/O.
"""

from __future__ import annotations

import re
from typing import Literal

VisionSetting = Literal["auto", "on", "off"]

_TEXT_ONLY = re.compile(
    r"""(^|[/:])(
        gpt-3\.5 | gpt-4-(0314|0613|32k) | gpt-4$ | o1-mini | o3-mini | gpt-oss
      | text- | davinci | babbage
      | deepseek-(chat|reasoner|coder|r1|v[23]) | deepseek-ai/deepseek-(r1|v[23])
      | codestral | mistral-(tiny|small-2402|7b) | mixtral | open-mistral
      | qwen(2\.5|3)?-coder | qwq | qwen2\.5-\d | qwen3-\d
      | (meta-)?llama-?3(\.[0-3])?(?!.*vision)
      | claude-(instant|2)
      | kimi-k2 | glm-4\.[5-6](?!v) | minimax-m\d
    )""",
    re.VERBOSE | re.IGNORECASE,
)


def takes_images(model: str, setting: VisionSetting) -> bool:
    """Whether `model` is sent images: `setting` on or off decides; auto says yes unless
    the name is known to be a text-only model."""
    if setting == "on":
        return True
    if setting == "off":
        return False
    return _TEXT_ONLY.search(model.strip()) is None


def vision_refusal(model: str, setting: VisionSetting) -> str | None:
    """Why images cannot be sent to `model` (a sentence naming the setting), or None."""
    if takes_images(model, setting):
        return None
    if setting == "off":
        return f"images are not sent: llm.vision is off (the model is {model})"
    return (
        f"the model {model} is known not to take images; set llm.vision: on if it does, "
        "or pick a vision model"
    )
