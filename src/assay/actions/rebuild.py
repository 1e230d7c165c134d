"""`rebuild`: restore redundancy (btrfs: a full balance); the step lasts until it ends.

    - {action: rebuild, after: add-disk, wait_until: {done: rebuild}, timeout: 15m}
"""

from __future__ import annotations

from typing import Literal

from assay.actions.context import ActionContext
from assay.scenario.models import StepBase


class Params(StepBase):
    action: Literal["rebuild"] = "rebuild"


def requires(p: Params) -> set[str]:
    return {"rebuild"}


def run(p: Params, ctx: ActionContext) -> str:
    return ctx.fs.operation(ctx, "rebuild") or "rebuild started"
