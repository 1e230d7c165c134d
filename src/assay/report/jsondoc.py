"""The machine-readable summary of a run (`--json`, `export --format json`), from run.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.results.record import RunRecord
from assay.results.recordparts import ComponentPlan


def transactional(run: RunRecord) -> dict[str, dict[str, float]]:
    """Per workload, Jetstress' "achieved transactional IO/s": the fixed-rate components of
    its transactional streams (Exchange: database reads and writes, not log or BDM)."""
    out: dict[str, dict[str, float]] = {}
    for name, s in run.stats.items():
        info = run.components.get(name, ComponentPlan())
        if not info.transactional or not s.target_iops:
            continue
        t = out.setdefault(name.split(".", 1)[0], {"target_iops": 0.0, "achieved_iops": 0.0})
        t["target_iops"] += s.target_iops
        t["achieved_iops"] += s.iops or 0.0
    return out


def summary_document(run: RunRecord, run_dir: Path) -> dict[str, Any]:
    workloads: dict[str, Any] = {}
    for name, s in run.stats.items():
        workload, component = name.split(".", 1)
        wl = workloads.setdefault(workload, {"components": {}})
        wl["components"][component] = {
            "target_iops": s.target_iops,
            "achieved_iops": s.iops,
            "achieved_pct": s.achieved_pct,
            "mbps": s.mbps,
            "lat_avg_ms": s.lat_avg_ms,
            "lat_p50_ms": s.lat_p50_ms,
            "lat_p95_ms": s.lat_p95_ms,
            "lat_p99_ms": s.lat_p99_ms,
            "lat_p999_ms": s.lat_p999_ms,
            "lat_max_ms": s.lat_max_ms,
            "behind_max_s": s.behind_max_s,
            "ios": s.ios,
            "seconds": s.seconds,
        }
    for wl, t in transactional(run).items():
        workloads[wl]["transactional"] = {k: round(v, 3) for k, v in t.items()}
    return {
        "schema_version": 1,
        "status": run.status,
        "verdict": " ".join(run.headline()),
        "reason": run.reason or None,
        "measured_s": run.measured_s,
        "graded_s": run.graded_s,
        "run_id": run.id,
        "run_dir": str(run_dir),
        "scenario": run.scenario.name,
        "thresholds": [t.stored() for t in run.thresholds],
        "workloads": workloads,
        **({"integrity": {k: run.integrity.get(k) for k in (
            "status", "lost", "stale", "corrupt", "unreadable", "workloads")}}
           if run.integrity else {}),
        "warnings": run.warnings,
        **cluster_document(run),
    }


def cluster_document(run: RunRecord) -> dict[str, Any]:
    """A cluster run's part: skew, losses, and each host's verdict and statistics."""
    c = (run.model_extra or {}).get("cluster")
    if not isinstance(c, dict):
        return {}
    return {"cluster": {
        "hosts": list(c.get("hosts") or {}), "worst_skew_ms": c.get("worst_skew_ms"),
        "skew_ms": c.get("skew_ms"), "lost": c.get("lost") or {},
        "thresholds": c.get("thresholds") or [],
        "each_host": {h: {"passed": g.get("passed"), "ios": g.get("ios"),
                          "thresholds": g.get("thresholds"), "stats": g.get("stats")}
                      for h, g in (c.get("graded") or {}).items()}}}
