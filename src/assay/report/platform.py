"""The platform's own state in a report: a health band and its series (platform.ndjson, as
the platform driver wrote it each second on the run's clock; see docs/platforms.md)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from assay.report.downsample import envelope_xy
from assay.results import safeopen

SERIES = "platform.ndjson"
MAX_POINTS = 2000
CHARTS = (("not_clean", "PGs not active+clean"), ("degraded_objects", "degraded objects"),
          ("misplaced_objects", "misplaced objects"), ("recovery_mbps", "recovery MB/s"),
          ("client_iops", "client IO/s (as the platform reports it)"))


def state(row: dict[str, Any]) -> str:
    """ok (healthy, every PG active+clean), warn, err or gone (no answer) for one second."""
    health = row.get("health")
    if health == "HEALTH_ERR":
        return "err"
    if health in (None, "unreachable", "unknown"):
        return "gone"
    return "ok" if health == "HEALTH_OK" and row.get("clean") else "warn"


def platform_data(run_dir: Path) -> dict[str, Any] | None:
    """Band segments [t0, t1, state, label] and the charts' series; None without a series."""
    try:  # a link out of the run directory is not read (results/safeopen.py)
        raw = safeopen.open_file(run_dir / SERIES, hard_links_ok=True)
    except OSError:
        return None
    rows = []
    with io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row.get("t"), int | float):
                rows.append(row)
    if not rows:
        return None
    band: list[list[Any]] = []
    for i, row in enumerate(rows):
        end = rows[i + 1]["t"] if i + 1 < len(rows) else row["t"] + 1.0
        s = state(row)
        label = row.get("health", "") + (" " + ", ".join(row["checks"]) if row.get("checks")
                                         else "")
        if band and band[-1][2] == s and band[-1][3] == label:
            band[-1][1] = end
        else:
            band.append([row["t"], end, s, label])
    ts = [r["t"] for r in rows]
    values = {
        "not_clean": [r.get("pgs_total", 0) - r.get("pgs_clean", (r.get("pgs") or {}).get(
            "active+clean", 0)) if "pgs" in r else None for r in rows],
        "degraded_objects": [r.get("degraded_objects") for r in rows],
        "misplaced_objects": [r.get("misplaced_objects") for r in rows],
        "recovery_mbps": [r.get("recovery_mbps") for r in rows],
        "client_iops": [(r.get("client_read_iops") or 0) + (r.get("client_write_iops") or 0)
                        if "pgs" in r else None for r in rows],
    }
    series = {}
    for key, _ in CHARTS:
        xs, ys = envelope_xy(ts, values[key], MAX_POINTS)
        series[key] = [[round(t, 3) for t in xs], ys]
    return {"band": band, "series": series, "labels": dict(CHARTS), "seconds": len(rows)}
