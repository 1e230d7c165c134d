"""Latency from the intended issue time (coordinated omission), from fio's per-IO logs.

fio times latency from the actual submit. When the storage stalls, a rate-limited fio stops
submitting and then bursts to catch up, so the IOs that waited in its schedule never show the
wait: a one-second stall at 1,000 IO/s left fio's p99 at 0.03 ms while, timed from when each
IO was due, p99 was 941 ms. Under even (linear) pacing fio's schedule is exact: IO k of a job
is due when the bytes before it, at the job's rate, have been sent. From the per-IO log
(completion time, latency, block size) we rebuild the issue order and each IO's due time, and
take latency = max(measured, completion - due). Poisson arrival times are not logged by fio
3.33, so Poisson-paced components are not covered (the schedule-lag check still is).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from assay.metrics.histogram import Histogram

MAX_LOGGED_IOS = 3_000_000  # fio keeps per-IO logs in memory until the job ends


@dataclass
class LoggedIO:
    completion_ms: float  # since the job started
    lat_ns: int
    size: int


def read_lat_log(path: Path) -> list[LoggedIO]:
    """fio `write_lat_log` lines: time (ms), latency (ns), direction, block size[, offset]."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.split(",")
            if len(parts) < 4:
                continue
            try:
                out.append(LoggedIO(float(parts[0]), int(parts[1]), int(parts[3])))
            except ValueError:
                continue
    return out


def _coarse(ns: float) -> int:
    """Three significant digits: enough for percentiles, few distinct histogram keys."""
    n = int(ns)
    if n < 1000:
        return n
    digits = len(str(n)) - 3
    return round(n, -digits)


def intended_latencies(ios: list[LoggedIO], bytes_per_s: float, start_s: float,
                       end_s: float) -> Histogram:
    """Histogram of latency from the due time, for IOs completing in [start_s, end_s]."""
    order = sorted(ios, key=lambda io: io.completion_ms - io.lat_ns / 1e6)
    hist = Histogram()
    sent = 0
    for io in order:
        due_ms = sent / bytes_per_s * 1000.0
        sent += io.size
        if not start_s * 1000 <= io.completion_ms <= end_s * 1000:
            continue
        lat = max(float(io.lat_ns), (io.completion_ms - due_ms) * 1e6)
        key = _coarse(lat)
        hist.bins[key] = hist.bins.get(key, 0) + 1
    return hist


def component_intended(jobs: Iterable[tuple[Path, float]], start_s: float, end_s: float) \
        -> dict[str, float | None] | None:
    """Merged intended-start latency of the jobs (log path, bytes/s) feeding one component."""
    hist = Histogram()
    for path, bps in jobs:
        if not path.exists() or bps <= 0:
            return None
        hist.add(intended_latencies(read_lat_log(path), bps, start_s, end_s))
    if not hist:
        return None
    pct = hist.percentiles((50.0, 99.0, 99.9))
    return {
        "lat_intended_p50_ms": (pct[50.0] or 0) / 1e6,
        "lat_intended_p99_ms": (pct[99.0] or 0) / 1e6,
        "lat_intended_p999_ms": (pct[99.9] or 0) / 1e6,
        "lat_intended_max_ms": (hist.max or 0) / 1e6,
        "late_20ms_pct": 100.0 * hist.fraction_above(20e6),
    }
