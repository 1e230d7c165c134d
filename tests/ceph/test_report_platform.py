"""The report's platform band: states per second merged into segments, series for charts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.report.html import write_report
from assay.report.platform import platform_data, state
from tests.report.test_browser import CHROMIUM, browser, copy_run, open_report  # noqa: F401


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


STRIP_RED = """([sel, rgb]) => {
  const c = document.querySelector(sel), d = c.getContext('2d');
  const dpr = window.devicePixelRatio || 1, y = Math.round((22 - 4) * dpr);  // in the strip
  const row = d.getImageData(0, y, c.width, 1).data;
  for (let x = 0; x < c.width; x++) {
    const i = 4 * x;
    if (Math.abs(row[i] - rgb[0]) < 12 && Math.abs(row[i + 1] - rgb[1]) < 12 &&
        Math.abs(row[i + 2] - rgb[2]) < 12) return x / dpr;
  }
  return null;
}"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_the_health_strip_shares_the_io_charts_time_axis(tmp_path: Path,
                                                         open_report: Any) -> None:  # noqa: F811
    """Red from 6 s on the IOPS chart is at the same pixel as on the platform's charts, and a
    step's marker too: one x scale and the same margins (platform rows before the run's
    first second and after its last are off the shared axis)."""
    run = copy_run(tmp_path)
    rows = [{"t": t + 0.5, "health": "HEALTH_ERR" if 6 <= t < 8 else "HEALTH_OK",
             "checks": ["OSD_SCRUB_ERRORS"] if 6 <= t < 8 else [], "clean": True,
             "pgs": {"active+clean": 32}, "pgs_total": 32} for t in range(-3, 16)]
    (run / "platform.ndjson").write_text("".join(json.dumps(r) + "\n" for r in rows))
    o = open_report(write_report(run))
    page = o.page
    assert o.errors == []
    page.locator("#platform").scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "platform-report.png"), full_page=True)  # for an eye
    red = [page.evaluate(STRIP_RED, [f'.chart[data-chart="{c}"] canvas.base', [207, 34, 46]])
           for c in ("iops", "platform-pgs", "lat_avg_ms", "platform-recovery")]
    assert None not in red, red
    assert abs(red[0] - red[1]) <= 1 and abs(red[2] - red[3]) <= 1, red  # same column, same x
    left = page.eval_on_selector_all(
        '.chart[data-chart="iops"] .event-marker, .chart[data-chart="platform-pgs"] '
        '.event-marker', "els => els.map(e => [e.dataset.name, parseFloat(e.style.left)])")
    by_name: dict[str, list[float]] = {}
    for name, x in left:
        by_name.setdefault(name, []).append(x)
    assert by_name["snapshot-1"] and all(len(xs) == 2 and abs(xs[0] - xs[1]) < 0.5
                                         for xs in by_name.values()), by_name
    widths = page.eval_on_selector_all('.chart[data-chart="iops"] canvas.base, '
                                       '.chart[data-chart="platform-pgs"] canvas.base',
                                       "els => els.map(e => e.clientWidth)")
    assert widths[0] == widths[1]
    assert page.locator("#platform-band").count() == 0  # no second, differently scaled band


def test_a_run_graded_only_on_platform_thresholds_does_not_say_nothing_was_graded() -> None:
    import io

    from rich.console import Console

    from assay.report.terminal import print_summary
    from assay.results.record import RunRecord
    from assay.results.rundir import read_record

    run = Path(__file__).parents[1] / "fixtures" / "runs" / "exchange-fixture"
    data = read_record(run).model_dump()
    data.update(thresholds=[], status="failed", cluster={"hosts": {}, "lost": {}, "thresholds": [
        {"expr": "platform.health_err_s == 0s", "component": "platform", "unit": "s",
         "metric": "health_err_s", "observed": 10.0, "bound": 0.0, "passed": False,
         "note": "time in HEALTH_ERR"}]})
    buf = io.StringIO()
    print_summary(Console(file=buf, width=160), RunRecord.model_validate(data), run)
    text = buf.getvalue()
    assert "platform.health_err_s == 0s: 10.0 s" in text
    assert "nothing was graded" not in text
