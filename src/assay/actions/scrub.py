"""`scrub`: the platform's scrub (read and verify every copy); the step lasts until it ends.

    - {action: scrub, at: 30s, wait_until: {done: scrub}, timeout: 10m}
    - {name: corrupt, action: scrub, corrupt: true, at: 30s, timeout: 3m}    # Ceph
    - {name: repair, action: scrub, repair: true, after: corrupt, timeout: 3m}

Ceph can also plant a read error in one copy and deep-scrub its PG until scrub finds it
(`corrupt`: the PG inconsistent, HEALTH_ERR; the event names the PG), and repair what scrub
found (`repair`: ceph pg repair); see platforms/cephscrub.py. Test clusters only.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from assay.actions.context import ActionContext
from assay.scenario.models import StepBase


class Params(StepBase):
    action: Literal["scrub"] = "scrub"
    corrupt: bool = Field(False, description="Ceph: plant a read error in one copy, then "
                                             "deep-scrub its PG until scrub finds it")
    repair: bool = Field(False, description="Ceph: repair every inconsistent PG (ceph pg "
                                            "repair) and wait until none is left")

    @model_validator(mode="after")
    def _one(self) -> Params:
        if self.corrupt and self.repair:
            raise ValueError("give corrupt or repair, not both (two steps: `after:` links them)")
        return self


def what(p: Params) -> str:
    return "scrub.corrupt" if p.corrupt else "scrub.repair" if p.repair else "scrub"


def requires(p: Params) -> set[str]:
    return {what(p)}


def run(p: Params, ctx: ActionContext) -> str:
    return ctx.fs.operation(ctx, what(p)) or "scrub started"
