"""`host_fail`: take a host of a cluster run down mid-run (X-Ray's node failure).

    - {action: host_fail, at: 8s, host: n3}
    - {action: host_fail, at: 10m, host: n3, run: "ipmitool -H {bmc} -E chassis power off"}
    - {action: host_fail, at: 10m, host: n3, run: "virsh destroy {host}"}

On a lab cluster (`assay lab create cluster`; its inventory names it in `assay_lab_cluster`)
the lab cuts the host's network link. Elsewhere `run` is a command template run on this
machine (IPMI, `virsh destroy`, a cloud CLI, `acli vm.off`): {host}, {address} and the host's
inventory variables ({bmc}, {ansible_host}, ...; never one named like a password or secret),
each quoted for the shell. The run goes on on the other hosts; the lost host is detected
within seconds (cluster/liveness.py) and `after host_fail` thresholds grade the survivors. The step
ends when the run has lost the host: a host still reporting after that time (a command
that did nothing) fails the step, and the run with it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.actions import hostpower
from assay.actions.context import ActionContext
from assay.scenario.models import StepBase


class Params(StepBase):
    action: Literal["host_fail"] = "host_fail"
    host: str = Field(..., min_length=1, description="the inventory host to take down: its "
                                                     "name, or an index (`-1`: the last)")
    run: str | None = Field(None, description="command template for a real platform")


def requires(p: Params) -> set[str]:
    return set()


def run(p: Params, ctx: ActionContext) -> str:
    done = hostpower.perform("fail", p.host, p.run, ctx)
    lost = hostpower.confirm_loss(str(ctx.details.get("host", p.host)), ctx)
    return "\n".join(x for x in (done, lost) if x)
