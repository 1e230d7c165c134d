"""`COMPONENT.METRIC` names for tables and charts (db.data.read.lat_p99, mail.db.read.iops)."""

from __future__ import annotations

from typing import Any

from assay.exitcodes import UserError
from assay.thresholds.grammar import METRICS


def check(names: list[str], components: list[str]) -> list[str]:
    """Validate `--metric` values against the plan's components; default: the first
    component's p99 latency and IOPS."""
    if not names:
        reads = [c for c in components if c.endswith(".read")] or components
        return [f"{reads[0]}.lat_p99", f"{reads[0]}.iops"] if reads else []
    for n in names:
        comp, _, metric = n.rpartition(".")
        if metric not in METRICS:
            raise UserError(f"--metric {n}: unknown metric {metric!r} "
                            f"(known: {', '.join(METRICS)})")
        if comp not in components:
            raise UserError(f"--metric {n}: no component {comp!r} "
                            f"(components: {', '.join(components)})")
    return names


def value(record: dict[str, Any], name: str) -> float | None:
    comp, _, metric = name.rpartition(".")
    v = (record.get("stats") or {}).get(comp, {}).get(metric)
    return None if v is None else float(v)


def label(name: str) -> str:
    metric = name.rpartition(".")[2]
    unit = {"iops": "IO/s", "mbps": "MB/s", "behind": "s"}.get(metric, "ms")
    return f"{name} ({unit})"


def fmt(name: str, v: float | None) -> str:
    if v is None:
        return "-"
    metric = name.rpartition(".")[2]
    if metric.startswith("lat_"):
        return f"{v:.2f}ms" if v < 100 else f"{v:,.0f}ms"
    return f"{v:,.1f}"
