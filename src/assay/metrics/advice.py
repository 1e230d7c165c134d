"""Warnings that teach: what in a result should make the reader doubt or dig."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

from assay.metrics.summary import Stats


def advise(stats: Mapping[str, Stats], series: Iterable[dict[str, Any]],
           windows: Mapping[str, tuple[float, float]],
           data_ratios: Mapping[str, tuple[float, float]]) -> list[str]:
    """`windows`: component -> the (start, end) it was measured over; `data_ratios`:
    workload -> (compressibility, dedupe) of its written data."""
    out: list[str] = []
    per_second: dict[str, list[float]] = {}
    for row in series:
        lo, hi = windows.get(row["c"], (0.0, float("inf")))
        if lo <= row["t"] - row["dt"] / 2 <= hi and row["dt"] >= 0.5:
            per_second.setdefault(row["c"], []).append(row["iops"])
    for name, s in stats.items():
        if s.behind_max_s > 1.0:
            out.append(f"{name} fell {s.behind_max_s:.1f}s behind its fixed-rate schedule: fio "
                       f"times latency from the actual submit, so latency from the intended "
                       f"start was up to {s.behind_max_s:.1f}s higher than reported "
                       f"(coordinated omission)")
        elif s.intended and s.lat_p99_ms and (s.intended["lat_intended_p99_ms"] or 0) > \
                max(2 * s.lat_p99_ms, s.lat_p99_ms + 1.0):
            out.append(f"{name}: timed from when each IO was due, p99 latency was "
                       f"{s.intended['lat_intended_p99_ms']:.1f} ms, not the "
                       f"{s.lat_p99_ms:.1f} ms fio measured from the submit: the schedule "
                       f"slipped (coordinated omission)")
        elif s.target_iops and s.iops + s.rate_tolerance < 0.99 * s.target_iops:
            out.append(f"{name} reached {s.achieved_pct:.1f}% of its target rate")
        values = per_second.get(name, [])
        if not s.target_iops and len(values) >= 5 and statistics.fmean(values) > 0:
            cv = statistics.pstdev(values) / statistics.fmean(values)
            if cv > 0.25:
                out.append(f"{name}: per-second IOPS varies a lot (coefficient of variation "
                           f"{cv:.0%}); look at the series, and consider a longer warm-up")
    for workload, (comp, dedupe) in data_ratios.items():
        if comp > 1 or dedupe > 1:
            out.append(f"workload {workload} writes data that compresses {comp:g}:1 and dedupes "
                       f"{dedupe:g}:1: a platform with data reduction writes less, which "
                       f"flatters it against one without")
    return out
