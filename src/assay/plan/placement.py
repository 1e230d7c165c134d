"""Placement of workloads on a cluster's hosts, the X-Ray way, and each host's job files.

    workloads:
      db: {kind: oltp, hosts: "1:", count_per_host: 2, stagger: 30s}

`hosts` picks hosts from the inventory, in its order: `all`; an index `"0"` or `"-1"`; a
slice `"1:"`, `":n/2"`, `"n/2:"` (`n` is the number of hosts, `/` divides rounding down); a
list of host names; or an inventory group. Each of the `count_per_host` instances on a host
has its own files (in `<host>.<k>/` of the host's target, so two hosts sharing one directory
never touch each other's files) and its own rate, as X-Ray gives each OLTP VM its own
4,200 IOPS: a component's target is the per-instance rate times its instances. `stagger`
delays the start of each instance after the first by that much more (fio's `startdelay`).

An instance keeps the fio job names of its workload, so the instances of one host add up in
that host's series exactly as numjobs clones do.
"""

from __future__ import annotations

import copy
import re
from dataclasses import replace

from assay.hosts.inventory import Host
from assay.hosts.selection import PlacementError, select
from assay.metrics.sampler import ComponentSpec
from assay.plan.failover import plan_moves
from assay.plan.instances import delays, host_dir, instance_streams, ranks, reseed
from assay.plan.model import (
    PREFILL_JOB,
    RUN_JOB,
    ClusterPlan,
    HostPlan,
    Plan,
    device_problem,
    prefill_jobfile,
    run_jobfile,
)
from assay.scenario.models import ResolvedScenario
from assay.workloads.base import Stream


def place(plan: Plan, hosts: list[Host]) -> tuple[Plan, dict[str, dict[str, str]]]:
    """The cluster plan (components' targets scaled to every instance) and each host's job
    files. PlacementError names the workload whose placement is wrong."""
    by_workload: dict[str, list[Stream]] = {}
    for s in plan.streams:
        by_workload.setdefault(s.workload, []).append(s)
    placed: dict[str, list[Host]] = {}
    for name, params in plan.resolved.workloads.items():
        if params.host not in ("local", "all") and params.hosts is None:
            spec: str | list[str] | None = params.host
        else:
            spec = params.hosts
        try:
            placed[name] = select(spec, hosts)
        except PlacementError as e:
            raise PlacementError(str(e), name) from None
    counts = {name: params.count_per_host for name, params in plan.resolved.workloads.items()}
    rank = ranks(placed)
    order = {name: i for i, name in enumerate(plan.resolved.workloads)}
    jobfiles: dict[str, dict[str, str]] = {}
    host_plans: dict[str, HostPlan] = {}
    length = plan.warmup + plan.duration  # one instance's load, from its own start
    for hi, host in enumerate(hosts):
        streams: list[Stream] = []
        instances: dict[str, int] = {}
        for name in placed:
            if host.name not in rank[name]:
                continue
            stagger = plan.resolved.workloads[name].stagger
            instances[name] = counts[name]
            for k in range(counts[name]):
                nth = rank[name][host.name] * counts[name] + k  # its place cluster-wide
                streams += instance_streams(by_workload.get(name, []), host_dir(host.name, k),
                                     stagger * nth,
                                     plan.scenario.seed + 1000 * hi + k if k else None,
                                     plan.warmup, plan.duration)
        if not streams:
            continue
        streams.sort(key=lambda s: order.get(s.workload, 0))
        local = replace(plan, streams=streams)
        if host.device:  # a raw device there: the host's files laid out on it, one by one
            if problem := device_problem(streams):
                raise PlacementError(f"host {host.name} has a raw device ({host.device}), "
                                     f"not a directory: {problem[1]}, which only a "
                                     f"filesystem holds; place it on hosts with an "
                                     f"assay_path", problem[0])
            local = replace(local, resolved=on_device(plan.resolved, host.device))
        seed = plan.scenario.seed
        jobfiles[host.name] = {job: reseed(render(local), seed, seed + 1000 * hi)
                               for job, render in ((RUN_JOB, run_jobfile),
                                                   (PREFILL_JOB, prefill_jobfile))}
        files = local.files
        subdirs = sorted({f.rsplit("/", 1)[0] for f, _ in files if "/" in f})
        specs = [staggered(c, [delays(plan, s.workload, rank[s.workload][host.name]
                                      * counts[s.workload] + k)
                               for k in range(instances[s.workload])], length, plan.warmup)
                 for s in by_workload_in(plan, instances) for c in s.components]
        windows = {w: [(d, d + length) for d in (
            delays(plan, w, rank[w][host.name] * counts[w] + k) for k in range(n))]
            for w, n in instances.items() if plan.resolved.workloads[w].stagger}
        host_plans[host.name] = HostPlan(host, instances, files, subdirs, specs, windows)
    total = {name: len(on) * counts[name] for name, on in placed.items()}
    streams = copy.deepcopy(plan.streams)
    for s in streams:
        s.components = [staggered(c, [delays(plan, s.workload, n)
                                      for n in range(total[s.workload])], length,
                                      plan.warmup)
                        for c in s.components]
    every, moves = plan_moves(plan, placed, hosts, host_plans, jobfiles)
    cluster = ClusterPlan(host_plans, skew_limit(plan.scenario.thresholds), every, moves)
    note = plan.intended_note + (" on each host, by assay's agent (python3 there): per host "
                                 "and merged from the hosts' lag histograms"
                                 if plan.intended_note.startswith("from") else "")
    last = max((delays(plan, name, total[name] - 1) for name in total), default=0.0)
    return replace(plan, streams=streams, cluster=cluster, intended_note=note,
                   stagger_s=last), jobfiles


def on_device(resolved: ResolvedScenario, device: str) -> ResolvedScenario:
    """The scenario with its target a host's raw device (the job files' `filename`)."""
    sc = resolved.scenario
    target = sc.target.model_copy(update={"device": device, "path": None})
    return resolved.model_copy(update={"scenario": sc.model_copy(update={"target": target})})


def staggered(c: ComponentSpec, starts: list[float], length: float,
              warmup: float = 0.0) -> ComponentSpec:
    """A component run by instances starting at `starts`, each for `length` s from its own
    start: its target is the instances' running then (steps as they start and end), its
    schedule starts at the first one's start, and it ends with the last one. An instance
    started later than the run is scheduled from the end of its own `warmup` (fio's
    ramp_time: it counts no IO before)."""
    if not c.target_iops or not starts:
        return replace(c, start_s=c.start_s + min(starts, default=0.0))
    per, end = c.target_iops, length if c.end_s is None else c.end_s
    spans = [(c.start_s + d + (warmup if d else 0.0), end + d) for d in starts]

    def rate(t: float) -> float | None:
        n = sum(1 for a, b in spans if a <= t < b)
        return per * n if n else None

    first = min(a for a, _ in spans)
    edges = sorted({x for span in spans for x in span if x > first})
    steps = tuple((x, rate(x)) for x in edges)
    return replace(c, start_s=first, target_iops=rate(first),
                   target_steps=steps if len(set(starts)) > 1 else (),
                   end_s=None if c.end_s is None else max(b for _, b in spans))


SKEW = re.compile(r"^(?:start_skew\s*)?<=?\s*(?P<v>[0-9.]+)\s*(?P<u>us|ms|s)$")


def skew_limit(spec: object) -> float | None:
    """`start_skew: "< 10ms"` (or the list item "start_skew < 10ms") -> 10.0 (ms)."""
    items: list[str] = []
    if isinstance(spec, dict) and "start_skew" in spec:
        items.append(str(spec["start_skew"]).strip())
    elif isinstance(spec, list):
        items += [str(e).strip() for e in spec
                  if isinstance(e, str) and e.strip().startswith("start_skew")]
    for item in items:
        m = SKEW.match(item)
        if not m:
            raise PlacementError(f"start_skew: {item!r}: write it as \"< 10ms\"", "")
        return float(m.group("v")) * {"us": 1e-3, "ms": 1.0, "s": 1000.0}[m.group("u")]
    return None


def by_workload_in(plan: Plan, instances: dict[str, int]) -> list[Stream]:
    return [s for s in plan.streams if s.workload in instances]
