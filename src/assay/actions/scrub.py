"""`scrub`: the platform's scrub (read and verify every copy); the step lasts until it ends.

    - {action: scrub, at: 30s, wait_until: {done: scrub}, timeout: 10m}
"""

from __future__ import annotations

from typing import Literal

from assay.actions.context import ActionContext
from assay.scenario.models import StepBase


class Params(StepBase):
    action: Literal["scrub"] = "scrub"


def requires(p: Params) -> set[str]:
    return {"scrub"}


def run(p: Params, ctx: ActionContext) -> str:
    return ctx.fs.operation(ctx, "scrub") or "scrub started"
