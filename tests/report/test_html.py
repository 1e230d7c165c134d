"""The HTML report as a document: self-contained, data inert, built from stored files only."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.metrics.histogram import Histogram
from assay.report.html import build_report, safe_json, write_report
from assay.report.rundata import latency_curves, percentile_curve, phases, steps
from assay.results.recordparts import PhaseWindow
from assay.results.rundir import read_record
from tests.conftest import assay_in_process

RUN = Path(__file__).parents[1] / "fixtures" / "runs" / "exchange-fixture"


def embedded(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="assay-data">(.*?)</script>', html, re.S)
    assert m
    return json.loads(m.group(1))


def test_safe_json_never_contains_markup_characters() -> None:
    text = safe_json({"name": "</script><script>alert(1)</script>&amp;", "x": "\u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text)["name"] == "</script><script>alert(1)</script>&amp;"


def test_report_is_self_contained(tmp_path: Path) -> None:
    html = build_report(RUN)
    assert html.count("<script") == 3  # data + charts + page; all inline
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    assert "http://" not in html and "https://" not in html
    data = embedded(html)
    assert data["run"]["status"] == "failed"
    assert set(data["series"]) == {"mail.db.read", "mail.db.write", "mail.log.write",
                                   "mail.bdm.read"}
    assert [s["name"] for s in data["steps"]] == ["snapshot-1", "pull-disk"]
    assert data["phases"][0] == {"name": "warm-up", "start": 0.0, "end": 3.0, "kind": "warmup"}
    assert data["scenario_yaml"] == (RUN / "scenario.yaml").read_text()
    assert "[global]" in data["job_files"]["local"]


def test_hostile_names_stay_data(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(RUN, run_dir)
    run = json.loads((run_dir / "run.json").read_text())
    run["scenario"]["name"] = "<script>alert(1)</script>"
    (run_dir / "run.json").write_text(json.dumps(run))
    html = build_report(run_dir)
    assert "<script>alert(1)</script>" not in html
    assert embedded(html)["run"]["scenario"]["name"] == "<script>alert(1)</script>"
    assert "<title>assay: &lt;script&gt;alert(1)&lt;/script&gt; (failed)</title>" in html


def test_latency_curve_from_the_measured_window_only() -> None:
    run = read_record(RUN)
    curves = latency_curves(RUN, run)["curves"]
    p99 = run.stats["mail.db.read"].lat_p99_ms
    points = curves["mail.db.read"]
    at99 = next(ms for p, ms in points if p >= 99.0)
    assert at99 == pytest.approx(p99, rel=0.05)  # same merged bins as the verdict
    assert points[-1][0] == 100.0


def test_capped_histogram_reads_slices_of_a_large_file() -> None:
    run = read_record(RUN)
    whole = latency_curves(RUN, run)
    sliced = latency_curves(RUN, run, cap=8_000)
    assert sliced["sampled"] and not whole["sampled"]
    assert sliced["curves"]  # still a curve, from part of the file


def test_percentile_curve_is_monotonic() -> None:
    h = Histogram({1000 * i: i for i in range(1, 500)})
    pts = percentile_curve(h)
    assert pts == sorted(pts) and pts[-1] == [100.0, 0.499]


def test_phases_and_wall_clock_steps(tmp_path: Path) -> None:
    run = read_record(RUN).model_copy(update={  # `phases` as metrics/phases.py writes them
        "measured_window_s": (10, 70),
        "phases": [PhaseWindow(name="before", step=None, start=10, end=30),
                   PhaseWindow(name="during", step="snap", start=30, end=31),
                   PhaseWindow(name="after", step=None, start=31, end=70)]})
    got = phases(run, last_t=80)
    assert [p["name"] for p in got] == ["warm-up", "before", "during snap", "after",
                                        "not measured"]
    assert [p["kind"] for p in got] == ["warmup", "phase", "during", "phase", "after"]
    (tmp_path / "events.ndjson").write_text(
        '{"kind":"load","outcome":"started","time":1700000000.0}\n'
        '{"kind":"step","name":"snap","action":"snapshot","t_start":1700000012.5,'
        '"t_end":1700000013.0,"outcome":"ok"}\n{"kind":"step","name":"old","time":1700000020.0}\n')
    got = steps(tmp_path)
    assert [(s["name"], s["start"], s["end"]) for s in got] == [("snap", 12.5, 13.0),
                                                               ("old", 20.0, None)]


def test_report_command_writes_the_file_and_a_missing_run_is_exit_2(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(RUN, run_dir)
    ok = CliRunner().invoke(cli, ["report", str(run_dir)], catch_exceptions=False)
    assert ok.exit_code == 0 and (run_dir / "report.html").stat().st_size > 20_000
    out = tmp_path / "r.html"
    assert write_report(run_dir, out) == out and out.exists()
    bad = assay_in_process("report", "nope", "--results", str(tmp_path / "results"))
    assert bad.returncode == 2 and "no run 'nope'" in bad.stderr and "Traceback" not in bad.stderr
