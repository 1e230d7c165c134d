"""Latency from the due time, for every fixed-rate job (even or Poisson), for runs of any length,
on every host, in bounded memory and disk.

fio times latency from the actual submit: when the storage stalls, a rate-limited fio stops
submitting and then bursts to catch up, and the IOs that waited in its schedule never show the
wait (coordinated omission, fio issue #1394). Here:

1. Each fixed-rate job writes fio's issue log (`write_iolog`). On the host where fio runs,
   the agent's `issuelog` command (agent/issuelog.py; runners/issuelog.py starts it, on this
   machine as on every host of a cluster) reads it as fio writes it, rebuilds each IO's due
   time from the job's schedule and sends back, per job and second, a histogram of the IOs'
   lags: the `lags` stream of the run directory (a cluster's rows carry their `host`).
2. At the end, each second's lags are joined with fio's latency histogram of the same second
   and component: latency from the due time = lag + latency from the submit. Per IO the two
   are not paired in fio's output, so the longest lags go with the shortest latencies: after a
   stall, the IOs that waited in fio's queue are issued to storage that has just recovered,
   and the IOs that sat in the stalled storage were issued on time. The tail is then exact
   to within the latencies from the submit, which are small next to any lag worth reporting.
   A cluster's merged figure joins the merged samples with every host's lags (the hosts'
   histograms add), each host's its own samples with its own lags.

This module is the controller's half, the join; which jobs are paced, from the job file each
host runs, and the agent's job list are metrics/pacedjobs.py.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from assay.metrics.histogram import Histogram
from assay.metrics.sampler import ComponentSpec
from assay.metrics.summary import sample_bins
from assay.results.blocklog import read_rows

STREAM = "lags"
IOLOG_SUFFIX = ".iolog"
LATE_MS = 20.0
SLACK_S = 30  # lag rows may come this much out of time order (a job that starts late)


def fio_bucket(ns: float) -> int:
    """fio's bucket value for `ns` (64 buckets per power of two, < 0.8 % apart)."""
    n = int(ns)
    if n < 128:
        return n
    unit = 1 << (n.bit_length() - 7)
    return n // unit * unit


def pair(service: Mapping[int, int], lags: Mapping[int, int]) -> Histogram:
    """Latency from the due time of one second: the longest lags with the shortest latencies
    from the submit (see the module docstring); IOs without a partner keep their own value.
    fio_bucket is inlined (the same arithmetic): a cluster's grading runs this for every
    host, component and second."""
    out: dict[int, int] = {}
    get = out.get
    s_items = sorted(service.items())
    l_items = sorted(lags.items(), reverse=True)
    i = j = 0
    s_key, s_left = s_items[0] if s_items else (0, 0)
    l_key, l_left = l_items[0] if l_items else (0, 0)
    while i < len(s_items) and j < len(l_items):
        n = s_left if s_left < l_left else l_left
        if n > 0:
            key = s_key + l_key
            if key >= 128:
                shift = key.bit_length() - 7
                key = key >> shift << shift
            out[key] = get(key, 0) + n
        s_left -= n
        l_left -= n
        if s_left <= 0:
            i += 1
            if i < len(s_items):
                s_key, s_left = s_items[i]
        if l_left <= 0:
            j += 1
            if j < len(l_items):
                l_key, l_left = l_items[j]
    if i < len(s_items) and s_left > 0:
        out[s_key] = get(s_key, 0) + s_left
    for k, v in s_items[i + 1:]:
        if v > 0:
            out[k] = get(k, 0) + v
    if j < len(l_items) and l_left > 0:
        out[l_key] = get(l_key, 0) + l_left
    for k, v in l_items[j + 1:]:
        if v > 0:
            out[k] = get(k, 0) + v
    h = Histogram()
    h.bins = out
    return h


def _by_second(rows: Iterable[dict[str, Any]]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """Rows grouped by their whole second, in order."""
    group: list[dict[str, Any]] = []
    current: int | None = None
    for r in rows:
        s = round(float(r["t"]))
        if current is not None and s != current:
            yield current, group
            group = []
        current = s
        group.append(r)
    if current is not None:
        yield current, group


def in_time_order(rows: Iterable[dict[str, Any]], slack: float = SLACK_S) \
        -> Iterator[dict[str, Any]]:
    """Lag rows in time order: an agent sends each job's seconds in order, the jobs a
    little apart, and the run's stream holds every host's as they came. Only the last
    `slack` seconds are held; a row later than that comes out late, as the join would take
    it anyway."""
    held: list[tuple[float, int, dict[str, Any]]] = []
    newest = float("-inf")
    for i, row in enumerate(rows):
        t = float(row["t"])
        newest = max(newest, t)
        heapq.heappush(held, (t, i, row))
        while held[0][0] < newest - slack:
            yield heapq.heappop(held)[2]
    while held:
        yield heapq.heappop(held)[2]


Windows = Mapping[str, tuple[list[str], float, float]]


def due_latency(run_dir: Path, components: Windows) -> dict[str, dict[str, float | None]]:
    """component -> latency from the due time over its window, for components whose every
    job has lags in the run's `lags` stream. `components`: name -> (its jobs, window start,
    window end)."""
    return due_join(read_rows(run_dir, "samples"), in_time_order(read_rows(run_dir, STREAM)),
                    components)


def due_join(samples: Iterable[dict[str, Any]], lag_rows: Iterable[dict[str, Any]],
             components: Windows) -> dict[str, dict[str, float | None]]:
    """The join of per-second samples (in time order) with the lags of the same seconds
    (rows of one job and second; several rows of a job and second add: a cluster's hosts,
    a host's instances); rows may come up to SLACK_S out of order."""
    jobs_seen: set[str] = set()
    lag_table: dict[int, dict[str, dict[int, int]]] = {}  # second -> job -> lag bins
    hists = {c: Histogram() for c in components}
    lag_iter = iter(lag_rows)
    pending = next(lag_iter, None)
    for second, group in _by_second(samples):
        while pending is not None and pending["t"] <= second + SLACK_S:
            per_job = lag_table.setdefault(round(pending["t"]), {}).setdefault(pending["c"],
                                                                                {})
            for k, v in pending["bins"].items():
                per_job[int(k)] = per_job.get(int(k), 0) + v
            jobs_seen.add(pending["c"])
            pending = next(lag_iter, None)
        lags_now = lag_table.pop(second, {})
        for stale in [s for s in lag_table if s < second]:  # seconds no sample ended in
            lag_table.pop(stale)
        for s in group:
            spec = components.get(s["c"])
            if spec is None:
                continue
            jobs, lo, hi = spec
            if not lo <= s["t"] - s["dt"] / 2 <= hi:
                continue
            lags: dict[int, int] = {}
            for j in jobs:
                for k, v in (lags_now.get(j) or {}).items():
                    lags[k] = lags.get(k, 0) + v
            # a sample held in memory keeps its bins as text (summary.sample_bins)
            service = {int(k): v for k, v in sample_bins(s).items()}
            hists[s["c"]].add(pair(service, lags))
    out: dict[str, dict[str, float | None]] = {}
    for c, (jobs, _, _) in components.items():
        h = hists[c]
        if not h or not set(jobs) <= jobs_seen:
            continue
        pct = h.percentiles((50.0, 99.0, 99.9))
        out[c] = {"lat_intended_p50_ms": (pct[50.0] or 0) / 1e6,
                  "lat_intended_p99_ms": (pct[99.0] or 0) / 1e6,
                  "lat_intended_p999_ms": (pct[99.9] or 0) / 1e6,
                  "lat_intended_max_ms": (h.max or 0) / 1e6,
                  "late_20ms_pct": 100.0 * h.fraction_above(LATE_MS * 1e6)}
    return out


class JobOptions(Protocol):
    @property
    def options(self) -> Mapping[str, object]: ...


class Timed(Protocol):
    """What due_windows reads of a plan (plan/model.py's Plan), without importing plan."""

    @property
    def jobs(self) -> Mapping[str, JobOptions]: ...
    @property
    def specs(self) -> Sequence[ComponentSpec]: ...
    @property
    def warmup(self) -> float: ...
    @property
    def total_seconds(self) -> float: ...


def due_windows(plan: Timed) -> dict[str, tuple[list[str], float, float]]:
    """Components whose every job is fixed-rate and logs its issues (the per-database views
    of a workload too): name -> (jobs, window)."""
    jobs = plan.jobs
    out = {}
    for spec in plan.specs:
        if spec.jobs and all(n in jobs and "write_iolog" in jobs[n].options
                             for n in spec.jobs):
            lo = max(plan.warmup, spec.start_s)
            hi = min(plan.total_seconds, spec.end_s) if spec.end_s is not None \
                else plan.total_seconds
            out[spec.component] = (list(spec.jobs), lo, hi)
    return out
