"""`pause`: a step that only lasts — to space `after` chains or to mark a window.

    - {action: pause, name: settle, after: replace-disk, for: 20s}
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.actions.context import ActionContext
from assay.scenario.models import Duration, StepBase


class Params(StepBase):
    action: Literal["pause"] = "pause"
    window: Duration = Field(..., alias="for", gt=0, description="seconds to wait")


def requires(p: Params) -> set[str]:
    return set()


def run(p: Params, ctx: ActionContext) -> str:
    ctx.sleep(p.window)
    return f"paused {p.window:g}s"
