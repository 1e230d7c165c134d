"""The report's platform band: states per second merged into segments, series for charts."""

from __future__ import annotations

import json
from pathlib import Path

from assay.report.platform import platform_data, state


def test_band_segments_and_series(tmp_path: Path) -> None:
    rows = [{"t": 0.5, "health": "HEALTH_OK", "clean": True, "pgs": {"active+clean": 32},
             "pgs_total": 32, "degraded_objects": 0},
            {"t": 1.5, "health": "HEALTH_OK", "clean": True, "pgs": {"active+clean": 32},
             "pgs_total": 32, "degraded_objects": 0},
            {"t": 2.5, "health": "HEALTH_WARN", "checks": ["PG_DEGRADED"], "clean": False,
             "pgs": {"active+clean": 8, "active+undersized+degraded": 24}, "pgs_total": 32,
             "degraded_objects": 130},
            {"t": 3.5, "health": "HEALTH_ERR", "checks": ["OSD_SCRUB_ERRORS"], "clean": False,
             "pgs": {"active+clean": 32}, "pgs_total": 32},
            {"t": 4.5, "health": "unreachable", "error": "timed out"}]
    (tmp_path / "platform.ndjson").write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = platform_data(tmp_path)
    assert data is not None
    assert [(b[0], b[1], b[2]) for b in data["band"]] == [
        (0.5, 2.5, "ok"), (2.5, 3.5, "warn"), (3.5, 4.5, "err"), (4.5, 5.5, "gone")]
    assert "PG_DEGRADED" in data["band"][1][3]
    assert data["series"]["not_clean"][1] == [0, 0, 24, 0, None]
    assert data["series"]["degraded_objects"][1][2] == 130
    assert state({"health": "HEALTH_OK", "clean": False}) == "warn"
    assert platform_data(tmp_path / "none") is None
