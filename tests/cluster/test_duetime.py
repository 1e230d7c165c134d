"""Latency from the due time on every host of a cluster run, from the agents' rows: replayed
from real fio and real agent output (tests/fixtures/replay/due-*), fast. The lab test with a
real SIGSTOP is tests/cluster/test_lab_duetime.py."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from assay.engine import Engine
from assay.metrics.duetime import in_time_order
from assay.plan.build import plan_text
from assay.report.terminal import print_summary
from assay.results.blocklog import read_rows
from assay.results.rundir import read_record
from assay.run_options import RunOptions
from assay.runners import ReplayRunner
from tests.cluster.test_group import REPLAY, hosts_in

THRESHOLDS = """\
  each_host.db.data.read.lat_intended_p99: "< 500ms"
  db.data.read.lat_intended_max: "< 500ms"
"""


def test_each_host_and_the_cluster_get_latency_from_the_due_time(tmp_path: Path) -> None:
    text = (REPLAY / "scenario.yaml").read_text() + THRESHOLDS
    hosts = hosts_in(tmp_path, ["n1", "n2", "n3"])
    plan = plan_text(text, str(REPLAY / "scenario.yaml"), hosts=hosts)
    assert "on each host, by assay's agent" in plan.intended_note
    # each instance logs its issues under its own name, in the host's run directory
    assert "write_iolog=n2.0.db.data.1.read.8k.iolog" in plan.jobfiles["n2"]["run.fio"]
    recordings = {"n1": "due-steady", "n2": "due-stall", "n3": "due-steady"}
    out = Engine(plan, RunOptions(tmp_path / "results", runner=lambda host, work: ReplayRunner(
        REPLAY / recordings[host], host, work)), Console(file=io.StringIO())).execute()
    rec = json.loads((out.run_dir / "run.json").read_text())
    graded = rec["cluster"]["graded"]
    due = {h: graded[h]["stats"]["db.data.read"]["intended"] for h in ("n1", "n2", "n3")}
    # n2's workers were stopped for 1 s: 280 IO/s waited up to a second in fio's schedule
    assert 850 <= due["n2"]["lat_intended_p99_ms"] <= 1050, due["n2"]
    for h in ("n1", "n3"):  # the others were not: their tail is the machine's jitter
        assert due[h]["lat_intended_p99_ms"] < 100, (h, due[h])
    # the cluster's figure comes from the hosts' merged histograms: n2's 280 late IOs are
    # 1/3 as many of the whole, so its p99 is lower than n2's own, its maximum the same
    merged = rec["stats"]["db.data.read"]["intended"]
    assert 600 <= merged["lat_intended_p99_ms"] < due["n2"]["lat_intended_p99_ms"]
    assert abs(merged["lat_intended_max_ms"] - due["n2"]["lat_intended_max_ms"]) < 1
    # graded per host (each_host.) and merged, and counted
    verdicts = {h: [t["passed"] for t in graded[h]["thresholds"]
                    if "lat_intended" in t["expr"]] for h in graded}
    assert verdicts == {"n1": [True], "n2": [False], "n3": [True]}
    [merged_t] = [t for t in rec["thresholds"] if t["metric"] == "lat_intended_max"]
    assert not merged_t["passed"] and rec["status"] == "failed"
    # every host's lags, each row with its host, in the run's lags stream as they came:
    # read back in time order
    rows = list(in_time_order(read_rows(out.run_dir, "lags")))
    assert {r["host"] for r in rows} == {"n1", "n2", "n3"}
    assert [r["t"] for r in rows] == sorted(r["t"] for r in rows)
    assert rec["cluster"]["due_time"] == {"hosts": ["n1", "n2", "n3"], "errors": {}}
    # the summary shows the figure as on one host, and per host; no word of it missing
    console = Console(file=io.StringIO(), width=200)
    print_summary(console, read_record(out.run_dir), out.run_dir)
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "p99 from due" in shown and "not computed" not in shown


def test_a_hosts_rows_come_in_time_order_holding_only_the_slack():
    # each job's seconds in order, the jobs up to 3 s apart: what an agent sends
    rows = [{"t": float(t + lag), "c": c} for t in range(100) for c, lag in (("a", 0), ("b", -3))
            if t + lag >= 0]
    held = []

    def counted():
        for i, r in enumerate(rows):
            held.append(i - len(out))
            yield r

    out: list = []
    for r in in_time_order(counted(), slack=5):
        out.append(r)
    assert [r["t"] for r in out] == sorted(r["t"] for r in rows) and len(out) == len(rows)
    assert max(held) <= 2 * 7  # two jobs over the slack's seconds, never the whole stream
    late = [*rows[:50], {"t": 1.0, "c": "late"}, *rows[50:]]  # beyond the slack: kept, late
    assert len(list(in_time_order(late, slack=5))) == len(late)
