"""`host_recover`: bring a host taken down by `host_fail` back.

    - {action: host_recover, at: 60s, host: n3}
    - {action: host_recover, at: 30m, host: n3, run: "virsh start {host}"}

On a lab cluster the host's link comes back up; elsewhere `run` is a command template, as for
`host_fail`. A host lost during the measured load rejoins it: its instances that were not
moved by `failover` start again there at their schedule's current point, and the cluster's
target steps back up by their rates (cluster/failover.py). They are graded from their return.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.actions import hostpower
from assay.actions.context import ActionContext
from assay.scenario.models import StepBase


class Params(StepBase):
    action: Literal["host_recover"] = "host_recover"
    host: str = Field(..., min_length=1, description="the inventory host to bring back: its "
                                                     "name, or an index")
    run: str | None = Field(None, description="command template for a real platform")


def requires(p: Params) -> set[str]:
    return set()


def run(p: Params, ctx: ActionContext) -> str:
    done = hostpower.perform("recover", p.host, p.run, ctx)
    back = ctx.watch.rejoin(str(ctx.details.get("host", p.host))) if ctx.watch else ""
    return "\n".join(x for x in (done, back) if x)
