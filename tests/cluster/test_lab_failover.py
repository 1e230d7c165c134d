"""A lost host on a real 3-host lab (sshd in network namespaces, real fio, loop ext4 per host):
its instances restart on the survivors (failover), a recovered host rejoins the load, and an
N-1 run recovers against the survivors' baseline."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean

import pytest

from assay.platforms import labcluster
from assay.platforms.labcluster import Cluster
from assay.results.rundir import read_ndjson
from tests.cluster.test_lab import assay
from tests.conftest import needs_fio
from tests.sshlab import cluster, needs_netns  # noqa: F401

pytestmark = [needs_netns, needs_fio, pytest.mark.tier2]  # long lab runs: make test's second tier

OLTP = """\
name: {name}
workloads:
  db: {{kind: oltp, data_iops: 300, read_pct: 70, data_files: 1, log_files: 1, log_iops: 50,
       dataset: 8MiB{extra}}}
timeline:
  warmup: 0s
  duration: {duration}
  steps:
{steps}
thresholds:
  db.data.read.iops: ">= 90% target before"
{thresholds}
"""


def run_lab(c: Cluster, tmp_path: Path, text: str, timeout: float = 180) \
        -> tuple[dict, Path]:
    """Run the scenario on the lab as a user does (n3 brought back whatever happens)."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(text)
    try:
        r = assay("run", str(scenario), "--hosts", c.inventory, "--results",
                  str(tmp_path / "results"), "--json", timeout=timeout)
    finally:
        labcluster.host_recover(c, "n3")
    assert r.returncode in (0, 1), r.stdout[-3000:] + r.stderr[-3000:]
    run_dir = Path(json.loads(r.stdout)["run_dir"])
    return json.loads((run_dir / "run.json").read_text()), run_dir


def read_iops(run_dir: Path, lo: float, hi: float) -> float:
    rows = [r for r in read_ndjson(run_dir / "series.ndjson")
            if r["c"] == "db.data.read" and lo < r["t"] <= hi]
    assert rows, (lo, hi)
    return mean(r["iops"] for r in rows)


def test_a_lost_hosts_instance_restarts_on_a_survivor_and_is_graded(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    rec, run_dir = run_lab(cluster, tmp_path, OLTP.format(
        name="lab-failover", extra=", failover: {after: 3s}", duration="26s",
        steps="    - {action: host_fail, at: 6s, host: n3}",
        thresholds='  cluster.db.data.read.iops: ">= 85% target after host_fail"\n'
                   '  db.data.read.lat_p99: "< 200ms"'))
    c = rec["cluster"]
    assert rec["status"] == "passed", (rec["reason"], rec["thresholds"], c["thresholds"])
    assert list(c["lost"]) == ["n3"]
    [moved] = c["failover"]
    assert moved["kind"] == "failover" and moved["from"] == "n3" and moved["host"] == "n1"
    assert moved["instances"] == ["db@n3.0"] and moved["ios"] > 1000
    # started at the instant its job file was cut for, it ends with the hosts, by itself
    assert moved["exit"] == 0 and not moved["stopped"], moved
    loss = c["lost"]["n3"]["t"]
    # from the loss: detection (a few s), the 3 s of `after`, the start; its first IO then
    assert 3.0 < moved["gap_s"] < 15.0, moved
    # fio's start there (SSH, forking its jobs) on a loaded machine: seconds at most
    assert 0 <= moved["first_io_s"] - moved["restart_s"] < 6.0, moved
    # the survivors' IO rises after the delay: 2 instances' worth, then 3 again
    between = read_iops(run_dir, loss + 1.5, moved["restart_s"] - 0.5)
    after = read_iops(run_dir, moved["first_io_s"] + 1.5, 25.0)
    assert 0.8 * 420 < between < 1.15 * 420, between
    assert after > 0.9 * 630 and after > 1.3 * between, (between, after)
    rows = [r for r in read_ndjson(run_dir / "series.ndjson") if r["c"] == "db.data.read"]
    assert rows[-2]["target_iops"] == 630 and \
        any(r["target_iops"] == 420 for r in rows if r["t"] > loss)
    # graded: the moved instance's gap is the figure, counted in the verdict
    [did] = [t for t in c["thresholds"] if t["metric"] == "failover_gap_s"]
    assert did["passed"] and did["observed"] == moved["gap_s"]
    # it ran on n1's standby copy of n3's files, written by n1's prefill
    assert (Path(cluster.hosts[0].path) / "n3.0.standby" / "db.data.1.dat").stat().st_size \
        == 7 << 20
    shown = assay("show", str(run_dir)).stdout
    assert "moved: db@n3.0 on n1 at" in shown and "after n3's loss" in shown, shown
    print(f"failover: loss at {loss}s, first IO again at {moved['first_io_s']}s "
          f"(gap {moved['gap_s']} s); read IO/s {between:.0f} -> {after:.0f}")


def test_a_recovered_host_rejoins_the_load_and_the_target_steps_back_up(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    rec, run_dir = run_lab(cluster, tmp_path, OLTP.format(
        name="lab-rejoin", extra="", duration="24s",
        steps="    - {action: host_fail, at: 5s, host: n3}\n"
              "    - {action: host_recover, at: 12s, host: n3}",
        thresholds='  cluster.db.data.read.iops: ">= 85% target after host_recover"'))
    c = rec["cluster"]
    assert rec["status"] == "passed", (rec["reason"], rec["thresholds"], c["thresholds"])
    [back] = c["failover"]
    assert back["kind"] == "rejoin" and back["host"] == "n3" and back["ios"] > 1000
    assert 12.0 < back["restart_s"] < 20.0 and back["first_io_s"] is not None
    between = read_iops(run_dir, c["lost"]["n3"]["t"] + 1.5, 12.0)
    after = read_iops(run_dir, back["first_io_s"] + 1.5, 23.0)
    assert after > 0.9 * 630 and after > 1.3 * between, (between, after)
    steps = [e for e in rec["events"] if e.get("action") == "host_recover"]
    assert steps and "n3 rejoined the load" in steps[0]["output"], steps
    shown = assay("show", str(run_dir)).stdout
    assert "returned: db@n3.0 rejoined on its host" in shown, shown
    assert "3 hosts, 3 active at the end" in shown  # n3 is back in the load
    assert f"lost at {c['lost']['n3']['t']}s, back at {back['first_io_s']}s" in shown, shown
    print(f"rejoin: back at {back['restart_s']}s; read IO/s {between:.0f} -> {after:.0f}")


def test_an_n_minus_1_run_passes_and_recovers_against_the_survivors_baseline(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    rec, run_dir = run_lab(cluster, tmp_path, OLTP.format(
        name="lab-n-1", extra="", duration="20s",
        steps="    - {action: host_fail, at: 6s, host: n3}",
        thresholds='  cluster.db.data.read.iops: ">= 90% target after host_fail"\n'
                   '  db.data.read.recovery: "< 12s after host_lost"'))
    assert rec["status"] == "passed", (rec["reason"], rec["thresholds"])
    [recovery] = [t for t in rec["thresholds"] if t["metric"] == "recovery"]
    assert recovery["passed"] and recovery["observed"] is not None, recovery
    before = read_iops(run_dir, 1.0, 6.0)
    after = read_iops(run_dir, rec["cluster"]["lost"]["n3"]["t"] + 1.5, 19.5)
    assert 0.55 < after / before < 0.8, (before, after)  # 2 of 3 hosts: 2/3
    print(f"N-1: read IO/s {before:.0f} before, {after:.0f} after; recovery "
          f"{recovery['observed']} s")
