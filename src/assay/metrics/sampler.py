"""Per-second samples from fio's cumulative status dumps.

fio's `--status-interval` dumps are cumulative since the job started. Subtracting successive
dumps gives each interval's IO count, bytes, latency sum and latency histogram, per job and
direction; jobs that feed one component (e.g. the four data files of an OLTP database) are then
merged by summing — counts and bins add exactly.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from assay.metrics.counters import DIRECTIONS, Cumulative, Parsed, counters
from assay.metrics.histogram import Histogram
from assay.metrics.steps import stepped
from assay.metrics.training import Training


@dataclass
class Sample:
    """One component over one interval."""

    component: str
    t: float  # end of the interval, seconds since the load started
    dt: float
    ios: int
    bytes: int
    lat_sum_ns: float
    lat_max_ns: int | None
    hist: Histogram
    target_iops: float | None = None
    behind_s: float = 0.0  # how far the component lags its fixed-rate schedule
    phase: str = "run"

    @property
    def iops(self) -> float:
        return self.ios / self.dt if self.dt > 0 else 0.0

    @property
    def mbps(self) -> float:
        return self.bytes / self.dt / 1e6 if self.dt > 0 else 0.0

    def row(self) -> dict[str, Any]:
        """The series record written to series.ndjson (latencies in ms)."""
        pct = self.hist.percentiles(cap=self.lat_max_ns)
        avg = self.lat_sum_ns / self.ios / 1e6 if self.ios else None
        return {
            "t": round(self.t, 3), "dt": round(self.dt, 3), "c": self.component,
            "phase": self.phase, "ios": self.ios, "bytes": self.bytes,
            "iops": round(self.iops, 2), "mbps": round(self.mbps, 3),
            "lat_avg_ms": _ms(avg, 1.0), "lat_p50_ms": _ms(pct[50.0]),
            "lat_p95_ms": _ms(pct[95.0]), "lat_p99_ms": _ms(pct[99.0]),
            "lat_p999_ms": _ms(pct[99.9]), "lat_max_ms": _ms(self.lat_max_ns),
            "target_iops": self.target_iops, "behind_s": round(self.behind_s, 3),
        }


    def record(self) -> dict[str, Any]:
        """What samples.ndjson keeps (counts, sums, the maximum, histogram bins) for exact
        re-aggregation; the bins as JSON text (`bins_json`): a day of per-second dicts would
        take gigabytes of memory, the text a tenth of it (see summary.sample_bins)."""
        return {"t": round(self.t, 3), "dt": round(self.dt, 3), "c": self.component,
                "ios": self.ios, "bytes": self.bytes, "lat_sum_ns": self.lat_sum_ns,
                "lat_max_ns": self.lat_max_ns, "behind_s": round(self.behind_s, 3),
                "bins_json": json.dumps(self.hist.to_json(), separators=(",", ":"))}


def stored_line(record: dict[str, Any]) -> str:
    """A `record()` as one samples.ndjson line, its bins inline (`"bins": {...}`)."""
    head = {k: v for k, v in record.items() if k != "bins_json"}
    return json.dumps(head, separators=(",", ":"))[:-1] + f',"bins":{record["bins_json"]}}}'


def _ms(ns: float | None, scale: float = 1e-6) -> float | None:
    if ns is None:
        return None
    return round(ns * scale, 4)


@dataclass
class ComponentSpec:
    component: str  # e.g. "db.data.read"
    jobs: list[str]  # fio job names that feed it
    direction: str
    target_iops: float | None = None
    poisson: bool = False
    start_s: float = 0.0  # when its load starts (phases of a micro-benchmark)
    end_s: float | None = None  # when it ends, if before the run does
    paced: bool = False  # its fio jobs are rate-limited to the target (not closed loop)
    # the target from each time on, when it changes mid-run (staggered instances starting
    # and ending, a cluster's lost host): `target_iops` until the first step
    target_steps: tuple[tuple[float, float | None], ...] = ()
    training: Training | None = None  # simulated accelerators fed by it (ai-training)
    timed: bool = False  # graded by how long its bursts take (a checkpoint's save, restore)
    # a view of load another component counts (a database's failed transactions, its schedule
    # lag, each transaction type): not part of a host's IO/s
    view: bool = False

    def rate_at(self, t: float) -> float | None:
        return stepped(self.target_iops, self.target_steps, t)

    def due(self, t: float) -> float:
        """The IOs its fixed-rate schedule has due by `t`: the target's integral from
        `start_s`, step by step."""
        edges = [self.start_s, *(since for since, _ in self.target_steps
                                 if self.start_s < since < t), t]
        return sum((self.rate_at(a) or 0.0) * (b - a)
                   for a, b in zip(edges, edges[1:], strict=False) if b > a)


class Sampler:
    """Feed fio dumps in order; get one Sample per component per interval."""

    def __init__(self, components: list[ComponentSpec], warmup_s: float = 0.0,
                 parsed: Parsed | None = None):
        self.components = components
        self.warmup_s = warmup_s
        self.parsed = parsed  # shared with others reading the same dumps: a cluster's hosts
        self._last: dict[tuple[str, str], Cumulative] = {}
        self._t0_ms: float | None = None
        self._last_t = 0.0
        self._done: dict[str, int] = {c.component: 0 for c in components}
        self._jobs_start_ms: float | None = None  # when fio's jobs began: the schedule's t=0
        self._feeds: dict[tuple[str, str], list[int]] = {}  # (job, direction) -> components
        for i, c in enumerate(components):
            for job in dict.fromkeys(c.jobs):
                self._feeds.setdefault((job, c.direction), []).append(i)

    def start(self, epoch_ms: float) -> None:
        """When fio was started; the time axis itself starts when fio's jobs do."""
        self._t0_ms = epoch_ms

    def pin(self, jobs_start_ms: float) -> None:
        """Start the axis at a given instant instead of anchoring it on the first dump: a
        cluster host's series runs on the merged series' clock (cluster/hostseries.py)."""
        self._jobs_start_ms = jobs_start_ms

    @property
    def jobs_start_ms(self) -> float | None:
        """Epoch ms at which fio's jobs began: t=0 of the series and of the schedule."""
        return self._jobs_start_ms

    def feed(self, dump: dict[str, Any], arrived_ms: float | None = None) -> list[Sample]:
        """One status dump; `arrived_ms` is when it was read (the runner's clock), the time
        of a dump that carries no `timestamp_ms` of its own."""
        ts = float(dump.get("timestamp_ms") or arrived_ms or 0)
        jobs: dict[str, dict[str, Any]] = {}
        clones: dict[str, int] = {}
        for j in dump.get("jobs", []):  # numjobs clones share a name: key them apart
            # counted, not searched: a cluster's merged dump holds a name once per host, and
            # a search of the keys taken is quadratic in hosts (1,024 hosts: 2.6 M probes a
            # second); the same keys, as the text after the last '#' is the count
            name = str(j.get("jobname"))
            n = clones.get(name, 0)
            clones[name] = n + 1
            jobs[f"{name}#{n}"] = j
        if self._jobs_start_ms is None:
            self._jobs_start_ms = self._anchor(ts, jobs)
        t = max((ts - self._jobs_start_ms) / 1000.0, self._last_t)
        dt = t - self._last_t
        if dt <= 0.05:  # a repeated or final dump right after an interval: fold into the next
            return []
        diffs: dict[tuple[str, str], Cumulative] = {}
        for name, job in jobs.items():
            for d in DIRECTIONS:
                now = self.parsed.get(job, d) if self.parsed else counters(job, d)
                prev = self._last.get((name, d), Cumulative())
                if now is prev:  # the same dump's job again (a lost host's, frozen)
                    diffs[(name, d)] = Cumulative(cum_max_ns=now.lat_max_ns)
                    continue
                if now.ios < prev.ios or now.bytes < prev.bytes:  # counters restarted (the
                    prev = Cumulative()  # end of fio's ramp_time): take as a new base
                # in fio's ramp_time bytes move while no IO is counted: none of them count;
                # after it, a dump may carry an IO's bytes a moment before its latency: kept
                diffs[(name, d)] = Cumulative(
                    ios=now.ios - prev.ios,
                    bytes=max(now.bytes - prev.bytes, 0) if now.ios else 0,
                    lat_sum_ns=max(now.lat_sum_ns - prev.lat_sum_ns, 0.0),
                    lat_max_ns=now.lat_max_ns if now.lat_max_ns > prev.lat_max_ns else 0,
                    hist=now.since(prev), cum_max_ns=now.lat_max_ns)
                self._last[(name, d)] = now
        parts: list[list[Cumulative]] = [[] for _ in self.components]
        for (key, d), diff in diffs.items():  # in the dump's order: the sums add as before
            for i in self._feeds.get((key.rsplit("#", 1)[0], d), ()):
                parts[i].append(diff)
        samples = [self._sample(spec, parts[i], t, dt)
                   for i, spec in enumerate(self.components)]
        self._last_t = t
        return samples

    def _anchor(self, ts: float, jobs: dict[str, dict[str, Any]]) -> float:
        """When fio's jobs began, from the first dump: t=0 of the axis. The axis runs on
        `timestamp_ms` (fio's wall clock), which cannot compress. fio's start-up (forking,
        opening files) is not load and stays off it: `job_runtime` says how long the jobs
        ran, but a late first dump of slow fixed-rate jobs (a busy machine, jobs at 1-12
        IO/s) carries a `job_runtime` far below it (826 ms at 5 s). The IOs the fixed-rate
        jobs did say how long they ran, at least: a start later than that would grade 5 s of
        IO as 0.8 s. Never before fio itself was started."""
        runtime = max((float(j.get("job_runtime") or 0) for j in jobs.values()), default=0.0)
        paced = [s for s in self.components
                 if s.paced and s.target_iops and s.jobs and not s.start_s]
        due = sum(s.target_iops or 0.0 for s in paced)
        done = sum(counters(j, s.direction).ios for s in paced
                   for key, j in jobs.items() if key.rsplit("#", 1)[0] in s.jobs)
        ran_ms = max(runtime, 1000.0 * done / due if due else 0.0)
        start = ts - ran_ms
        return max(start, self._t0_ms) if self._t0_ms is not None else start

    def _sample(self, spec: ComponentSpec, parts: list[Cumulative], t: float,
                dt: float) -> Sample:
        hist = Histogram.merged(p.hist for p in parts)
        ios = sum(p.ios for p in parts)
        exact_max = max((p.lat_max_ns for p in parts), default=0)
        # a new cumulative maximum is exact; otherwise the top bucket of this interval's bins,
        # which can sit up to 0.8 % above the value and never above the maximum so far
        bucket_max = min(hist.max or 0, max((p.cum_max_ns for p in parts), default=0))
        lat_max = max(exact_max, bucket_max) or None
        self._done[spec.component] += ios
        behind = 0.0
        target = spec.rate_at(t)
        if (target or spec.target_steps) and t > spec.start_s:
            due = spec.due(t)
            # Poisson arrivals wander by ±1.96·√n around the mean schedule: not a lag
            slack = 1.96 * math.sqrt(due) if spec.poisson else 1.0
            short = due - self._done[spec.component] - slack
            pace = target or max((v or 0.0 for _, v in spec.target_steps), default=0.0)
            behind = max(short / pace, 0.0) if pace else 0.0
        return Sample(
            component=spec.component, t=t, dt=dt, ios=ios, bytes=sum(p.bytes for p in parts),
            lat_sum_ns=sum(p.lat_sum_ns for p in parts), lat_max_ns=lat_max, hist=hist,
            target_iops=target, behind_s=behind,
            phase="warmup" if t - dt / 2 < self.warmup_s else "run")
