"""The plan a conversation holds (docs/adr/0059 Part 5): `current_plan`, the newest plan
the model wrote, which the plan pane shows for a resumed session (the context pins the same).

Imported where it is used: the plan pin reaches the settings models, which the CLI loads late.
"""

from __future__ import annotations

from forge.context.plan_pin import current_plan

__all__ = ["current_plan"]
