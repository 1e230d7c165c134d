"""Failover planned before the run: where a lost host's instances start again, and their files.

    workloads:
      mail: {kind: exchange, mailboxes: 2000, hosts: all, failover: {after: 30s}}

Each instance of a `failover` workload has one survivor picked for it, round robin over the
hosts that may take it (`failover.to`, default every other host running a workload), starting
with the host after its own. That survivor holds a standby copy of the instance's files,
written by its prefill (`<host>.<k>.standby/` under its target, beside its own instances'):
an Exchange DAG's passive copy, a VM's disk on shared storage. The restart (cluster/failover.py)
runs the instance on that copy from its schedule's current point to its own end.

Every instance also keeps its own job file, rendered from its own start: a recovered host's
instances (`host_recover`) restart from it on their own files.
"""

from __future__ import annotations

import re
from dataclasses import replace

from assay.fio.jobfile import fio_seconds
from assay.hosts.inventory import Host
from assay.hosts.selection import PlacementError, select
from assay.plan.instances import delays, host_dir, instance_streams, ranks, reseed
from assay.plan.model import (
    PREFILL_JOB,
    HostPlan,
    Instance,
    Move,
    Plan,
    prefill_jobfile,
    run_jobfile,
)
from assay.scenario.models import ResolvedScenario
from assay.scenario.yamlsource import Issue
from assay.workloads.base import Stream

STANDBY = ".standby"  # the standby copy's sub-directory: `<host>.<k>.standby`
RUNTIME = re.compile(r"^(runtime|startdelay)=.*\n", re.MULTILINE)


def check(resolved: ResolvedScenario, hosts: list[Host] | None) -> list[Issue]:
    """Plan-time errors of `failover` (file:line): a cluster run of 2 hosts or more."""
    issues: list[Issue] = []
    for name, params in resolved.workloads.items():
        if params.failover is None:
            continue
        where = ("workloads", name, "failover")
        if hosts is None:
            issues.append(resolved.source.issue(where, "failover restarts a lost host's "
                                                "instances on other hosts: it needs a cluster "
                                                "run (--hosts INVENTORY or --lab CLUSTER)"))
        elif len(hosts) < 2:
            issues.append(resolved.source.issue(where, f"failover needs a survivor: the "
                                                f"inventory has one host ({hosts[0].name})"))
    return issues


def plan_moves(plan: Plan, placed: dict[str, list[Host]], hosts: list[Host],
               host_plans: dict[str, HostPlan], jobfiles: dict[str, dict[str, str]]) \
        -> tuple[dict[str, list[Instance]], dict[str, list[Move]]]:
    """Every instance's own job file, each failover instance's survivor, and the survivors'
    prefill extended with the standby copies (their files counted in the space check).
    PlacementError when no survivor can take an instance."""

    instances = {h: [] for h in host_plans}  # type: dict[str, list[Instance]]
    moves: dict[str, list[Move]] = {}
    standby: dict[str, list[Stream]] = {}
    order = [h.name for h in hosts]
    rank = ranks(placed)
    takers: dict[str, set[str]] = {}  # workload -> the hosts its failover.to picks
    for hi, host in enumerate(hosts):
        if host.name not in host_plans:
            continue
        turn = 0
        for name in placed:
            if host.name not in rank[name]:
                continue
            params = plan.resolved.workloads[name]
            count = params.count_per_host
            for k in range(count):
                inst = _instance(plan, name, host.name, hi, k, rank[name][host.name] * count + k)
                instances[host.name].append(inst)
                if params.failover is None:
                    continue
                if name not in takers:
                    try:
                        takers[name] = {m.name for m in select(params.failover.to, hosts)}
                    except PlacementError as e:
                        raise PlacementError(f"failover.to: {e}", name) from None
                may = takers[name]
                after_own = order[hi + 1:] + order[:hi]  # round robin from the next host
                survivors = [h for h in after_own if h in host_plans and h in may]
                if not survivors:
                    picks = ", ".join(m for m in order if m in may) or "none"
                    raise PlacementError(f"failover: no survivor can take {host.name}'s "
                                         f"instances (failover.to picks {picks}; only "
                                         f"hosts that run a workload can)", name)
                to = survivors[turn % len(survivors)]
                turn += 1
                subdir = host_dir(host.name, k) + STANDBY
                streams = _streams(plan, name, subdir, inst.k)
                standby.setdefault(to, []).extend(streams)
                moves.setdefault(host.name, []).append(Move(
                    inst, to, float(params.failover.after), _render(plan, streams, hi)))
    for to, streams in standby.items():  # the survivor's prefill writes its standby copies
        extra = replace(plan, streams=streams)
        hp = host_plans[to]
        files = hp.files + extra.files
        host_plans[to] = replace(hp, files=files, subdirs=sorted(
            {f.rsplit("/", 1)[0] for f, _ in files if "/" in f}))
        jobfiles[to][PREFILL_JOB] += "\n; standby copies of other hosts' instances " \
                                     "(failover)\n" + prefill_jobfile(extra)
    return instances, moves


def _streams(plan: Plan, workload: str, subdir: str, k: int) -> list[Stream]:
    own = [s for s in plan.streams if s.workload == workload]
    return instance_streams(own, subdir, 0.0, plan.scenario.seed + 7 + k if k else None)


def _render(plan: Plan, streams: list[Stream], hi: int) -> str:
    seed = plan.scenario.seed
    return reseed(run_jobfile(replace(plan, streams=streams)), seed, seed + 1000 * hi)


def _instance(plan: Plan, workload: str, host: str, hi: int, k: int, nth: int) -> Instance:
    start = delays(plan, workload, nth)
    streams = _streams(plan, workload, host_dir(host, k), k)
    components = tuple(c for s in plan.streams if s.workload == workload for c in s.components)
    return Instance(workload, host, k, (start, start + plan.warmup + plan.duration),
                    _render(plan, streams, hi), components)


def restart_text(text: str, window: tuple[float, float], t: float) -> str | None:
    """An instance's job file started at `t` on the run's axis: from its schedule's point
    then to its own end (fio's startdelay and runtime in its [global]); None when it has
    ended by `t`."""
    begin, end = max(t, window[0]), window[1]
    if end - begin < 0.5:
        return None
    timing = f"[global]\nruntime={fio_seconds(end - begin)}\n"
    if begin > t:  # a staggered instance not started yet: it waits for its own start
        timing += f"startdelay={fio_seconds(begin - t)}\n"
    return RUNTIME.sub("", text).replace("[global]\n", timing, 1)
