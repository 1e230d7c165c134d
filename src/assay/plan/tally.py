"""How many thresholds a run's verdict counts, known when it is planned: the number the run's
header announces is the one its summary ends with.

A threshold is graded once per component it applies to (`db: rate` is a rate and a schedule
check on each of db's components). A cluster run adds each host graded on its own against the
`each_host.` thresholds that name its components, and the cluster's own (`start_skew`,
`platform.*`), once each (cluster/run.py's `count`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from assay.hosts.selection import one_host
from assay.metrics.summary import ComponentInfo
from assay.plan.model import Plan
from assay.plan.placement import skew_limit
from assay.platforms import platformstate
from assay.thresholds.evaluate import resolve, result_count
from assay.thresholds.grammar import Threshold, ThresholdError

# the phases a lost host is not graded on: they come after its loss (cluster/hostseries.py)
AFTER_LOSS = ("after", "between")


@dataclass(frozen=True)
class Tally:
    written: int  # the thresholds as written, presets expanded
    merged: int  # graded on the run's series (a cluster's merged one)
    hosts: dict[str, int] = field(default_factory=dict)  # a cluster's hosts, each on its own
    cluster: list[str] = field(default_factory=list)  # the cluster's own
    restarts: bool = False  # a restart after a host loss adds one (cluster/run.py)

    @property
    def total(self) -> int:
        return self.merged + sum(self.hosts.values()) + len(self.cluster)

    def describe(self) -> str:
        """`8 (4 written, each graded on every component it matches)`, or a cluster's parts."""
        more = ", and 1 per restart after a host loss" if self.restarts else ""
        per_host = sum(self.hosts.values())
        if not per_host and not self.cluster:
            return f"{self.total}" + (f" ({self.written} written, each graded on every "
                                      f"component it matches)" if self.total != self.written
                                      else "") + more
        parts = [f"{self.merged} on the merged series"] if self.merged else []
        if per_host:
            counts = set(self.hosts.values())
            parts.append(f"{counts.pop()} on each of {len(self.hosts)} hosts" if len(counts) == 1
                         else f"{per_host} on the hosts' own series (" +
                         ", ".join(f"{h} {n}" for h, n in self.hosts.items()) + ")")
        if self.cluster:
            parts.append(f"{len(self.cluster)} of the cluster ({', '.join(self.cluster)})")
        return f"{self.total}: {', '.join(parts)}{more}"


def tally(plan: Plan) -> Tally:
    """The plan's count, as the run's verdict will make it."""
    written = len(plan.thresholds) + len(plan.host_thresholds)
    merged = count(plan.thresholds, plan.components)
    if plan.cluster is None:
        return Tally(written, merged)
    views = {h: host_view(plan, h) for h in plan.cluster.hosts}
    lost = taken_down(plan)
    hosts = {h: count([t for t in v.thresholds if h not in lost or
                       t.phase_kind not in AFTER_LOSS], v.components)
             for h, v in views.items()}
    spec = plan.scenario.thresholds
    own = (["start_skew"] if skew_limit(spec) is not None else []) + \
        [f"platform.{metric}" for metric, _, _ in platformstate.entries(spec)]
    restarts = any(plan.cluster.moves.values()) or \
        any(s.action == "host_recover" for s in plan.resolved.steps)
    return Tally(written + len(own), merged, {h: n for h, n in hosts.items() if n}, own,
                 restarts)


def taken_down(plan: Plan) -> set[str]:
    """The hosts a `host_fail` step takes down."""
    assert plan.cluster is not None
    hosts = [hp.host for hp in plan.cluster.hosts.values()]
    return {h for s in plan.resolved.steps if s.action == "host_fail"
            if (h := one_host(str(getattr(s, "host", "")), hosts))}


def count(thresholds: Sequence[Threshold], components: Sequence[ComponentInfo]) -> int:
    return sum(result_count(t, components) for t in thresholds)


def host_view(plan: Plan, host: str) -> Plan:
    """The plan as one host of a cluster sees it: its workloads' streams with its components'
    targets, and the `each_host.` thresholds that name one of them (a workload placed on some
    hosts only is graded on those: `each_host.pg.tps` on the hosts that run pg)."""
    assert plan.cluster is not None
    hp = plan.cluster.hosts[host]
    specs = {c.component: c for c in hp.specs}
    streams = [replace(s, components=[specs[c.component] for c in s.components])
               for s in plan.streams if s.workload in hp.instances]
    own = replace(plan, streams=streams, thresholds=[])
    return replace(own, thresholds=[t for t in plan.host_thresholds
                                    if applies(t, own.components)])


def applies(t: Threshold, components: Sequence[ComponentInfo]) -> bool:
    try:
        return bool(resolve(t, components)) or bool(t.host or t.integrity)
    except ThresholdError:
        return False
