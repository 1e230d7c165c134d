"""Acceptance: on a loop device throttled to 400 read IOPS (cgroup v1 blkio), a search for the
largest fixed rate that passes finds the cap within 3 % in at most 8 trials, every trial a
stored run linked to the search, the overloaded first trial stopped early."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from assay.hosts import cgroup
from tests.conftest import needs_fio, needs_root

CAP = 400

SCENARIO = """\
name: search-cap
description: fixed-rate random reads on a device capped at {cap} read IOPS
target:
  path: {mnt}
  throttle: [{{device: {dev}, read_iops: {cap}}}]
workloads:
  db:
    kind: oltp
    data_iops: 100          # searched: the largest rate that passes
    read_pct: 100           # reads only, so the read cap is the only limit
    data_files: 1
    log_files: 0
    dataset: 64MiB
    load: {{pacing: even}}  # even pacing: the rate threshold's tolerance is 0.5 %
timeline: {{warmup: 1s, duration: 5s}}
thresholds:
  db: rate                  # iops >= target and never more than 1 s behind schedule
"""


@pytest.mark.tier2  # one of the suite's longest: the second tier
@needs_fio
@needs_root
@pytest.mark.skipif(not cgroup.available(), reason="needs cgroup v1 blkio")
def test_search_finds_the_throttled_cap(loopfs, tmp_path: Path) -> None:
    dev, mnt = loopfs("xfs", "512M")
    scenario = tmp_path / "cap.yaml"
    scenario.write_text(SCENARIO.format(cap=CAP, dev=dev, mnt=mnt))
    results = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "assay", "search", str(scenario), "--vary", "db.data_iops",
         "--from", "50", "--to", "5000", "--precision", "2%", "--max-trials", "8",
         "--results", str(results), "--json"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    answer = record["answer"]
    trials = record["trials"]
    assert record["status"] == "done" and answer["status"] == "found", answer
    assert abs(answer["last_pass"] - CAP) / CAP <= 0.03, (answer, trials)
    assert answer["first_fail"] > answer["last_pass"]
    assert len(trials) <= 8
    # the top of the range is hopeless against the cap: it stopped within seconds
    assert trials[0]["value"] == 5000 and trials[0]["stopped_early"], trials[0]
    assert trials[0]["seconds"] < 6 + 1 + 4
    assert "trial  1" in proc.stderr and "answer: db.data_iops" in proc.stderr
    # every trial is a catalogued run whose parent is the search
    with sqlite3.connect(results / "catalogue.sqlite") as con:
        rows = dict(con.execute("SELECT id, parent FROM runs").fetchall())
    assert {t["run_id"] for t in trials} <= set(rows)
    assert {rows[t["run_id"]] for t in trials} == {record["id"]}
    assert (results / "searches" / record["id"] / "search.json").exists()


@pytest.mark.tier2  # one of the suite's longest: the second tier
@needs_fio
@needs_root
@pytest.mark.skipif(not cgroup.available(), reason="needs cgroup v1 blkio")
def test_sweep_curve_from_a_closed_loop_maximum(loopfs, tmp_path: Path) -> None:
    """Closed loop on the capped device finds ~400 IO/s; 10-100 % of it run as fixed rates."""
    dev, mnt = loopfs("xfs", "512M")
    scenario = tmp_path / "cap.yaml"
    scenario.write_text(SCENARIO.format(cap=CAP, dev=dev, mnt=mnt).replace(
        "data_iops: 100 ", "data_iops: 200 "))
    chart = tmp_path / "curve.html"
    proc = subprocess.run(
        [sys.executable, "-m", "assay", "sweep", str(scenario), "--curve", "--duration", "3s",
         "--chart", str(chart), "--results", str(tmp_path / "results"), "--json"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    probe = [t for t in record["trials"] if t.get("probe")]
    points = [t for t in record["trials"] if not t.get("probe")]
    assert len(probe) == 1 and probe[0]["point"] == {"db.load.model": "closed"}
    scale = record["maximum"]["scale"]["db"]
    assert 0.9 * CAP <= 200 * scale <= 1.1 * CAP  # the closed loop found the cap
    assert [t["fraction"] for t in points] == [0.1, 0.5, 0.7, 0.8, 0.9, 1.0]
    for t in points[:4]:  # well under the cap, the fixed rates are delivered and pass
        asked = 200 * t["point"]["db.load.scale"]
        assert abs(t["stats"]["db.data.read"]["iops"] - asked) / asked < 0.05
        assert t["status"] == "passed"
    # every point of the curve has a latency to plot (a throttle caps the rate without a
    # queue below it, so latency need not grow: low rates are even slower on idle devices)
    assert all(t["stats"]["db.data.read"]["lat_avg"] > 0 for t in points)
    assert "100%" in proc.stderr and chart.read_text().startswith("<!doctype html>")
