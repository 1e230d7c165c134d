"""The live line of the progress bar: this second's IO rate and latency per workload."""

from __future__ import annotations

from collections.abc import Iterable

from assay.metrics.sampler import ComponentSpec, Sample
from assay.scenario.units import format_latency_ms


def live_line(samples: list[Sample], specs: Iterable[ComponentSpec] = ()) -> str:
    """`mail 242 IO/s 1.2ms p99 3.4ms | db ...` — per workload, this second; views of IOs
    another component counts (`specs` says which) are left out, or they would count twice."""
    views = {c.component for c in specs if c.view}
    by_wl: dict[str, list[Sample]] = {}
    for s in samples:
        if s.component not in views:
            by_wl.setdefault(s.component.split(".")[0], []).append(s)
    parts = []
    for wl, ss in by_wl.items():
        ios = sum(s.ios for s in ss)
        dt = max((s.dt for s in ss), default=1.0)
        lat = sum(s.lat_sum_ns for s in ss) / ios / 1e6 if ios else None
        p99 = max((s.hist.percentile(99) or 0 for s in ss), default=0) / 1e6 or None
        tag = " (warm-up)" if ss and ss[0].phase == "warmup" else ""
        parts.append(f"{wl} {ios / dt:,.0f} IO/s {format_latency_ms(lat)} "
                     f"p99 {format_latency_ms(p99)}{tag}")
    return " | ".join(parts)
