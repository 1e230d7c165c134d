"""`host_recover`: bring a host taken down by `host_fail` back.

    - {action: host_recover, at: 60s, host: n3}
    - {action: host_recover, at: 30m, host: n3, run: "virsh start {host}"}

On a lab cluster the host's link comes back up; elsewhere `run` is a command template, as for
`host_fail`. A host lost during a load does not rejoin that load (its fio session was ended);
it takes part again in the next run or phase.
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
    return hostpower.perform("recover", p.host, p.run, ctx)
