"""`each_host.` thresholds grade the hosts a workload is placed on, not the others (a host
without the workload has none of its components: grading it there was an internal error)."""

from __future__ import annotations

from pathlib import Path

from assay.cluster.hostseries import HostSeries
from assay.hosts import inventory
from assay.plan import plan_text
from assay.results.rundir import RunDir

SCENARIO = """\
name: subset
workloads:
  io: {kind: oltp, data_iops: 100, read_pct: 70, data_files: 1, log_files: 1, log_iops: 20,
       dataset: 8MiB}
  pg: {kind: postgres, hosts: ":2", scale: 1, rate: 40}
timeline: {duration: 10s}
thresholds:
  each_host.pg.tps: ">= 90% target"
  each_host.io.data.read.lat_p99: "< 50ms"
"""


def test_each_host_thresholds_grade_the_hosts_that_run_the_workload(tmp_path: Path) -> None:
    inv = tmp_path / "inventory.ini"
    inv.write_text("".join(f"n{i} ansible_host=10.0.0.{i} assay_path=/srv/a\n"
                           for i in (1, 2, 3)))
    plan = plan_text(SCENARIO, "subset.yaml", hosts=inventory.load(inv))
    series = HostSeries(plan, RunDir.create(tmp_path / "results", "subset"))
    graded = {h: [t.text for t in series.host_plan(h).thresholds] for h in ("n1", "n2", "n3")}
    for h in ("n1", "n2"):
        assert len(graded[h]) == 2 and any("pg.tps" in t for t in graded[h]), graded[h]
    assert len(graded["n3"]) == 1 and "io.data.read" in graded["n3"][0], graded["n3"]
    # grading a host with its samples does not fail on the workload it does not run
    result = series.grade([], {})
    assert set(result) == {"n1", "n2", "n3"}
