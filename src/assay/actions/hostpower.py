"""What `host_fail` and `host_recover` share: the lab-cluster driver, the command template."""

from __future__ import annotations

import re
import time
from pathlib import Path

from assay.actions.command import render
from assay.actions.context import ActionContext
from assay.hosts.selection import one_host
from assay.platforms import labcluster
from assay.platforms.fsbase import ActionFailed

SECRET = re.compile(r"pass|secret|token|key", re.IGNORECASE)
CONFIRM_S = 15.0  # beyond the loss time, how long host_fail waits for the loss


def perform(what: str, host: str, template: str | None, ctx: ActionContext) -> str:
    host = one_host(host, list(ctx.hosts.values())) or host  # a name, or an index ("-1")
    spec = ctx.hosts.get(host)
    if spec is None:
        raise ActionFailed(f"host {host!r} is not one of this run's hosts "
                           f"({', '.join(ctx.hosts) or 'none: run with --hosts'})")
    ctx.details["host"] = host
    if template:
        variables: dict[str, object] = {k: v for k, v in spec.vars.items()
                                        if not SECRET.search(str(k))}
        variables.update(host=host, address=spec.address, **{
            k: v for k, v in ctx.variables.items() if k in ("run_id", "t", "step", "n")})
        cmd = render(template, variables)
        ctx.details["command"] = cmd
        return ctx(cmd)
    lab = spec.vars.get("assay_lab_cluster")
    if not lab:
        raise ActionFailed(f"host_{what} {host}: give `run:` a command that does it on this "
                           f"platform (IPMI, virsh, a cloud CLI); only a lab cluster is "
                           f"driven without one")
    cluster = labcluster.load(Path(str(lab)).name, Path(str(lab)).parent)
    (labcluster.host_fail if what == "fail" else labcluster.host_recover)(cluster, host)
    return f"lab {cluster.name}: {host} link {'down' if what == 'fail' else 'up'}"


def confirm_loss(host: str, ctx: ActionContext) -> str:
    """After host_fail: wait until the run loses the host. A host that still reports once
    the loss should have been detected did not fail (a command that did nothing): the step
    fails, so that no `after host_fail` phase grades it as a survivor's absence."""
    watch = ctx.watch
    if watch is None:
        return ""
    began = time.monotonic()
    while True:
        waited = time.monotonic() - began
        if watch.is_lost(host):
            return f"{host} lost {waited:.1f} s after the host_fail command ended"
        # reported later than loss_s after the failure (1 s of dumps in flight allowed)
        if waited > watch.loss_s + 1.0 and watch.silence(host) < waited - watch.loss_s - 1.0:
            raise ActionFailed(f"{host} still reports {waited:.1f} s after host_fail: the host "
                               f"did not fail (did the command do anything?); no phase after "
                               f"it can grade the survivors")
        if waited > watch.loss_s + CONFIRM_S:
            raise ActionFailed(f"{host} was not lost {waited:.1f} s after host_fail")
        ctx.sleep(0.2)
