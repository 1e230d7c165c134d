"""CSV export: the per-second series, one row per second and component (spreadsheet-ready)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from assay.results.blocklog import read_rows
from assay.results.record import RunRecord

SUFFIX = "csv"
COLUMNS = ("t", "dt", "component", "phase", "ios", "bytes", "iops", "mbps", "lat_avg_ms",
           "lat_p50_ms", "lat_p95_ms", "lat_p99_ms", "lat_p999_ms", "lat_max_ms", "target_iops",
           "behind_s")


def render(run_dir: Path, record: RunRecord) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for row in read_rows(run_dir, "series"):
        row = {**row, "component": row.get("c")}
        w.writerow(["" if row.get(k) is None else row[k] for k in COLUMNS])
    return out.getvalue()
