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
