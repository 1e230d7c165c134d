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
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from assay.fio.jobfile import fio_seconds
from assay.hosts.inventory import Host
from assay.metrics.sampler import ComponentSpec
from assay.workloads.base import Stream

if TYPE_CHECKING:
    from assay.plan.failover import Instance, Move
    from assay.plan.model import Plan

SLICE = re.compile(r"^\s*(?P<a>[-0-9n/+ ]*)\s*(?::\s*(?P<b>[-0-9n/+ ]*))?\s*$")
TERM = re.compile(r"^(?:(?P<int>-?\d+)|n(?:\s*/\s*(?P<div>\d+))?(?:\s*(?P<sign>[-+])\s*"
                  r"(?P<add>\d+))?)$")
UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class PlacementError(ValueError):
    def __init__(self, message: str, workload: str = ""):
        super().__init__(message)
        self.workload = workload


@dataclass(frozen=True)
class HostPlan:
    """What one host runs: instances per workload, the files (relative to its target)."""

    host: Host
    instances: dict[str, int]  # workload -> count on this host
    files: list[tuple[str, int]]
    subdirs: list[str]
    specs: list[ComponentSpec]  # its components, targets scaled to its instances
    # workload -> each instance's load on the run's axis (s), when `stagger` delays them
    windows: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusterPlan:
    hosts: dict[str, HostPlan] = field(default_factory=dict)  # in inventory order
    skew_limit_ms: float | None = None  # `start_skew: "< 10ms"`: the worst start skew
    # each host's instances (a recovered host restarts them) and, per host, where its
    # `failover` instances start again when it is lost (plan/failover.py)
    instances: dict[str, list[Instance]] = field(default_factory=dict)
    moves: dict[str, list[Move]] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return list(self.hosts)

    def to_json(self) -> dict[str, object]:
        return {name: {**hp.host.public(), "instances": hp.instances,
                       "files": len(hp.files),
                       **({"windows": {w: [list(x) for x in v] for w, v in hp.windows.items()}}
                          if hp.windows else {}),
                       **({"failover": [{"workload": m.instance.workload, "instance":
                                         m.instance.k, "to": m.to, "after_s": m.after}
                                        for m in self.moves[name]]}
                          if self.moves.get(name) else {})}
                for name, hp in self.hosts.items()}


def _term(text: str, n: int) -> int:
    m = TERM.match(text.strip())
    if not m:
        raise PlacementError(f"{text!r} is not an index (0, -1, n, n/2, n-1)")
    if m.group("int") is not None:
        return int(m.group("int"))
    value = n // int(m.group("div")) if m.group("div") else n
    if m.group("add"):
        value += int(m.group("add")) * (1 if m.group("sign") == "+" else -1)
    return value


def select(spec: str | list[str] | None, hosts: list[Host]) -> list[Host]:
    """The hosts a workload's `hosts:` picks, in inventory order (PlacementError if none)."""
    names = [h.name for h in hosts]
    if spec is None or spec == "all":
        return list(hosts)
    if isinstance(spec, list):
        unknown = [s for s in spec if s not in names]
        if unknown:
            raise PlacementError(f"not in the inventory: {', '.join(map(str, unknown))} "
                                 f"(hosts: {', '.join(names)})")
        return [h for h in hosts if h.name in spec]
    if spec in names:
        return [h for h in hosts if h.name == spec]
    groups = {g for h in hosts for g in h.groups}
    if spec in groups:
        return [h for h in hosts if spec in h.groups]
    m = SLICE.match(spec)
    if not m or not spec.strip():
        raise PlacementError(f"{spec!r} is neither all, an index, a slice, a host nor a group")
    n = len(hosts)
    if m.group("b") is None:  # one index
        i = _term(m.group("a"), n)
        if not -n <= i < n:
            raise PlacementError(f"index {spec!r} is outside the {n} hosts")
        return [hosts[i]]
    a = _term(m.group("a"), n) if m.group("a").strip() else 0
    b = _term(m.group("b"), n) if m.group("b").strip() else n
    picked = hosts[a:b]
    if not picked:
        raise PlacementError(f"slice {spec!r} picks none of the {n} hosts")
    return picked


def one_host(spec: str, hosts: list[Host]) -> str | None:
    """The one host a step names (`n3`, or an index such as `-1`: the last), or None."""
    try:
        picked = select(spec, hosts)
    except PlacementError:
        return None
    return picked[0].name if len(picked) == 1 else None


def host_dir(host: str, k: int) -> str:
    """The sub-directory of instance `k` on `host`: unique per host and instance."""
    return f"{UNSAFE.sub('_', host)[:48]}.{k}"


def _instance(streams: list[Stream], subdir: str, delay: float, seed: int | None,
              warmup: float = 0.0, duration: float = 0.0) -> list[Stream]:
    from assay.plan.build import in_subdir  # build imports this module

    out = copy.deepcopy(streams)
    in_subdir(out, subdir)
    for s in out:
        for job in s.jobs:
            job.options.pop("write_lat_log", None)  # instances would share a log name
            if seed is not None:  # a second instance on a host: its own random sequence
                job.options["randseed"] = seed
            if delay:
                start = float(str(job.options.get("startdelay", "0")).rstrip("s") or 0)
                job.options["startdelay"] = fio_seconds(start + delay)
                if warmup and duration and "runtime" not in job.options:
                    # its own warm-up, not graded: fio counts no IO (lat_ns.N) in ramp_time,
                    # then runs the measured time (ramp_time adds to runtime)
                    job.options["ramp_time"] = fio_seconds(warmup)
                    job.options["runtime"] = fio_seconds(duration)
    return out


def place(plan: Plan, hosts: list[Host]) -> tuple[Plan, dict[str, dict[str, str]]]:
    """The cluster plan (components' targets scaled to every instance) and each host's job
    files. PlacementError names the workload whose placement is wrong."""
    from assay.plan.model import PREFILL_JOB, RUN_JOB, prefill_jobfile, run_jobfile

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
    order = {name: i for i, name in enumerate(plan.resolved.workloads)}
    jobfiles: dict[str, dict[str, str]] = {}
    host_plans: dict[str, HostPlan] = {}
    length = plan.warmup + plan.duration  # one instance's load, from its own start
    for hi, host in enumerate(hosts):
        streams: list[Stream] = []
        instances: dict[str, int] = {}
        for name, on in placed.items():
            if host not in on:
                continue
            stagger = plan.resolved.workloads[name].stagger
            instances[name] = counts[name]
            for k in range(counts[name]):
                nth = on.index(host) * counts[name] + k  # the instance's place cluster-wide
                streams += _instance(by_workload.get(name, []), host_dir(host.name, k),
                                     stagger * nth,
                                     plan.scenario.seed + 1000 * hi + k if k else None,
                                     plan.warmup, plan.duration)
        if not streams:
            continue
        streams.sort(key=lambda s: order.get(s.workload, 0))
        local = replace(plan, streams=streams)
        seed = plan.scenario.seed
        jobfiles[host.name] = {job: _reseed(render(local), seed, seed + 1000 * hi)
                               for job, render in ((RUN_JOB, run_jobfile),
                                                   (PREFILL_JOB, prefill_jobfile))}
        files = local.files
        subdirs = sorted({f.rsplit("/", 1)[0] for f, _ in files if "/" in f})
        specs = [staggered(c, [delays(plan, s.workload, on.index(host) * counts[s.workload]
                                      + k) for k in range(instances[s.workload])], length,
                           plan.warmup)
                 for s in by_workload_in(plan, instances) for c in s.components
                 for on in [placed[s.workload]]]
        windows = {w: [(d, d + length) for d in (
            delays(plan, w, placed[w].index(host) * counts[w] + k) for k in range(n))]
            for w, n in instances.items() if plan.resolved.workloads[w].stagger}
        host_plans[host.name] = HostPlan(host, instances, files, subdirs, specs, windows)
    total = {name: len(on) * counts[name] for name, on in placed.items()}
    streams = copy.deepcopy(plan.streams)
    for s in streams:
        s.components = [staggered(c, [delays(plan, s.workload, n)
                                      for n in range(total[s.workload])], length,
                                      plan.warmup)
                        for c in s.components]
    from assay.plan.failover import plan_moves

    every, moves = plan_moves(plan, placed, hosts, host_plans, jobfiles)
    cluster = ClusterPlan(host_plans, skew_limit(plan.scenario.thresholds), every, moves)
    note = ("not computed in a cluster run: it needs each IO's issue time from fio's issue "
            "logs, and those stay on each host (read back over SSH as fio writes them, they "
            "would cost the hosts' links and this machine's CPU); latency is from submission")
    last = max((delays(plan, name, total[name] - 1) for name in total), default=0.0)
    return replace(plan, streams=streams, cluster=cluster, intended_note=note,
                   stagger_s=last), jobfiles


def delays(plan: Plan, workload: str, nth: int) -> float:
    """The start delay of a workload's `nth` instance cluster-wide (`stagger`)."""
    return float(plan.resolved.workloads[workload].stagger) * nth


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


def _reseed(text: str, seed: int, new: int) -> str:
    """Each host its own random seed (offsets, buffer contents): identical data on every
    host would flatter a platform that dedupes across them."""
    return text.replace(f"\nrandseed={seed}\n", f"\nrandseed={new}\n", 1)


def by_workload_in(plan: Plan, instances: dict[str, int]) -> list[Stream]:
    return [s for s in plan.streams if s.workload in instances]
