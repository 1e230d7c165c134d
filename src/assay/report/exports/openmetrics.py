"""OpenMetrics export: a stored run's per-second series with their timestamps, for
`promtool tsdb create-blocks-from openmetrics` (backfilling Prometheus with finished runs).

The families and labels are those of the live endpoint (`assay run --metrics`,
metrics/families.py), so one Grafana dashboard reads live scrapes and backfilled runs alike.
Each second's timestamp is the load's start (the `load started` event) plus the row's `t`.
OpenMetrics wants each family's points together and each series in time order: rows are
taken component by component.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from assay.metrics.exposition import render as render_text
from assay.metrics.families import (
    Totals,
    add_component,
    add_host,
    catalogue,
    component_labels,
    workload_hosts,
)
from assay.results.blocklog import read_rows
from assay.results.record import RunRecord
from assay.results.rundir import read_ndjson

SUFFIX = "om"


def load_start(run_dir: Path, record: RunRecord) -> float:
    """Epoch seconds of the series' t = 0: the `load started` event, else the run's start."""
    for e in read_ndjson(run_dir / "events.ndjson"):
        if e.get("kind") == "load" and e.get("outcome") == "started" \
                and isinstance(e.get("time"), int | float):
            return float(e["time"])
    return float(record.started or 0.0)


def _by_key(rows: Iterable[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if isinstance(r.get("t"), int | float):
            out.setdefault(str(r.get(key) or "local"), []).append(r)
    return out


def render(run_dir: Path, record: RunRecord) -> str:
    t0 = load_start(run_dir, record)
    fams = catalogue()
    base = {"run_id": record.id or run_dir.name, "scenario": record.scenario.name}
    hosts = workload_hosts(record.plan.workloads, record.plan.hosts)
    end = record.ended or t0
    fams["assay_run"].add(1, base, timestamp=t0)
    series = _by_key(read_rows(run_dir, "series"), "c")
    last = t0
    phase_at: dict[float, str] = {}
    for c, rows in series.items():
        totals, labels = Totals(), component_labels(base, c, hosts)
        for r in rows:
            ts = round(t0 + float(r["t"]), 3)
            totals.add(r)
            add_component(fams, r, labels, totals, ts)
            phase_at[ts] = str(r.get("phase") or "run")
            last = max(last, ts)
    end = max(end, last + 1.0)
    for ts in sorted(phase_at):
        fams["assay_load_elapsed_seconds"].add(round(ts - t0, 3), base, timestamp=ts)
    for p in ("warmup", "run", "ended"):
        labels = {**base, "phase": p}
        for ts, phase in sorted(phase_at.items()):
            fams["assay_phase"].add(1 if phase == p else 0, labels, timestamp=ts)
        fams["assay_phase"].add(1 if p == "ended" else 0, labels, timestamp=end)
    lost = _losses(run_dir)
    host_rows = _by_key(read_rows(run_dir, "hosts"), "host")
    for h in sorted(set(record.plan.hosts) | set(host_rows) | set(lost)):
        labels = {**base, "host": h}
        for ts in sorted(phase_at):  # every second: active until lost
            gone = h in lost and ts >= lost[h]
            fams["assay_host_active"].add(0 if gone else 1, labels, timestamp=ts)
    for h, rows in host_rows.items():
        for r in rows:
            add_host(fams, r, {**base, "host": h}, round(t0 + float(r["t"]), 3))
    _steps(fams["assay_timeline_steps"].add, run_dir, base, t0)
    for t in record.thresholds:
        fams["assay_threshold_passing"].add(1 if t.passed else 0,
                                            {**base, "threshold": t.expr,
                                             "component": t.component}, timestamp=end)
    return render_text(fams.values(), openmetrics=True)


def _losses(run_dir: Path) -> dict[str, float]:
    return {str(e.get("host")): float(e["time"]) for e in read_ndjson(run_dir / "events.ndjson")
            if e.get("kind") == "host_lost" and isinstance(e.get("time"), int | float)}


def _steps(add: Any, run_dir: Path, base: dict[str, str], t0: float) -> None:
    """Each step's counter, counted when the step ended (its event's time)."""
    counts: dict[tuple[str, str], list[tuple[float, int]]] = {}
    for e in read_ndjson(run_dir / "events.ndjson"):
        if e.get("kind") != "step" or not isinstance(e.get("time"), int | float):
            continue
        key = (str(e.get("action") or "step"), str(e.get("outcome") or ""))
        points = counts.setdefault(key, [])
        points.append((round(float(e["time"]), 3), len(points) + 1))
    for (action, outcome), points in counts.items():
        for ts, n in points:
            add(n, {**base, "action": action, "outcome": outcome}, timestamp=ts)
