"""What `host_fail` and `host_recover` share: the lab-cluster driver, the command template."""

from __future__ import annotations

import re
from pathlib import Path

from assay.actions.command import render
from assay.actions.context import ActionContext
from assay.platforms.fsbase import ActionFailed

SECRET = re.compile(r"pass|secret|token|key", re.IGNORECASE)


def perform(what: str, host: str, template: str | None, ctx: ActionContext) -> str:
    from assay.plan.placement import one_host

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
    from assay.platforms import labcluster

    cluster = labcluster.load(Path(str(lab)).name, Path(str(lab)).parent)
    (labcluster.host_fail if what == "fail" else labcluster.host_recover)(cluster, host)
    return f"lab {cluster.name}: {host} link {'down' if what == 'fail' else 'up'}"
