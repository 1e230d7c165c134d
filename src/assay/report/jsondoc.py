"""The machine-readable summary of a run (`--json`, `export --format json`), from run.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def transactional(run: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per workload, Jetstress' "achieved transactional IO/s": the fixed-rate components of
    its transactional streams (Exchange: database reads and writes, not log or BDM)."""
    out: dict[str, dict[str, float]] = {}
    comps = run.get("components") or {}
    for name, s in (run.get("stats") or {}).items():
        info = comps.get(name) or {}
        if not info.get("transactional", True) or not s.get("target_iops"):
            continue
        t = out.setdefault(name.split(".", 1)[0], {"target_iops": 0.0, "achieved_iops": 0.0})
        t["target_iops"] += s["target_iops"]
        t["achieved_iops"] += s.get("iops") or 0.0
    return out


def summary_document(run: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    workloads: dict[str, Any] = {}
    for name, s in (run.get("stats") or {}).items():
        workload, component = name.split(".", 1)
        wl = workloads.setdefault(workload, {"components": {}})
        wl["components"][component] = {
            "target_iops": s.get("target_iops"),
            "achieved_iops": s.get("iops"),
            "achieved_pct": s.get("achieved_pct"),
            "mbps": s.get("mbps"),
            "lat_avg_ms": s.get("lat_avg_ms"),
            "lat_p50_ms": s.get("lat_p50_ms"),
            "lat_p95_ms": s.get("lat_p95_ms"),
            "lat_p99_ms": s.get("lat_p99_ms"),
            "lat_p999_ms": s.get("lat_p999_ms"),
            "lat_max_ms": s.get("lat_max_ms"),
            "behind_max_s": s.get("behind_max_s"),
            "ios": s.get("ios"),
            "seconds": s.get("seconds"),
        }
    for wl, t in transactional(run).items():
        workloads[wl]["transactional"] = {k: round(v, 3) for k, v in t.items()}
    return {
        "schema_version": 1,
        "status": run.get("status"),
        "reason": run.get("reason") or None,
        "run_id": run.get("id"),
        "run_dir": str(run_dir),
        "scenario": (run.get("scenario") or {}).get("name"),
        "thresholds": run.get("thresholds") or [],
        "workloads": workloads,
        "warnings": run.get("warnings") or [],
    }
