"""Prefill reuse on every host of a cluster run, end to end on the lab cluster: a host's
files are reused when assay wrote them with this run's pattern and they are whole; a changed
file, a changed data pattern and --fresh are written again, per host."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from assay.platforms.labcluster import Cluster
from assay.platforms.safety import MANIFEST
from tests.cluster.test_lab import assay
from tests.conftest import needs_fio
from tests.sshlab import cluster, needs_netns  # noqa: F401

pytestmark = [needs_netns, needs_fio, pytest.mark.tier2]  # long lab runs: make test's second tier

SCENARIO = """\
name: lab-reuse
workloads:
  db: {{kind: oltp, data_iops: 50, read_pct: 70, data_files: 1, log_files: 1, log_iops: 10,
       dataset: 192MiB{data}}}
timeline: {{warmup: 0s, duration: 3s}}
thresholds:
  db.data.read.iops: ">= 50% target"
"""


def run(c: Cluster, tmp_path: Path, *extra: str, data: str = "") -> tuple[dict, float]:
    scenario = tmp_path / "reuse.yaml"
    scenario.write_text(SCENARIO.format(data=data))
    t0 = time.monotonic()
    r = assay("run", str(scenario), "--hosts", c.inventory, "--results",
              str(tmp_path / "results"), "--json", *extra, timeout=300)
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    run_dir = Path(json.loads(r.stdout)["run_dir"])
    rec = json.loads((run_dir / "run.json").read_text())
    assert rec["status"] == "passed"
    rec["started_fio"] = sorted(p.parent.name for p in run_dir.glob("hosts/*/prefill.out.json"))
    return rec, took


def test_each_hosts_files_are_reused_when_whole_and_alike_and_rewritten_otherwise(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    hosts = [h.name for h in cluster.hosts]
    first, took_first = run(cluster, tmp_path)
    p = first["prefill"]
    assert p["reused_files"] == 0 and p["files"] == 6 and p["bytes"] > 3 * 180 << 20
    assert all(p["hosts"][h] == {"files": 2, "bytes": p["bytes"] // 3, "reused_files": 0}
               for h in hosts)
    assert first["started_fio"] == hosts
    # the same scenario again: nothing written, on any host
    second, took_second = run(cluster, tmp_path)
    p2 = second["prefill"]
    assert p2["files"] == 0 and p2["bytes"] == 0 and p2["reused_files"] == 6
    assert all(p2["hosts"][h]["reused_files"] == 2 for h in hosts)
    assert "seconds" not in p2  # as on one host: no prefill ran
    assert second["started_fio"] == []  # no prefill fio started on any host
    print(f"prefill of 3 x 192 MiB: fresh {p['seconds']} s (run {took_first:.0f} s), "
          f"reused (run {took_second:.0f} s)")
    for h in hosts:  # each instance directory's manifest, in the form a local target's has
        listed = json.loads((Path(cluster.host(h).path) / f"{h}.0" / MANIFEST).read_text())
        assert sorted(listed) == ["db.data.1.dat", "db.log.1.dat"]
        assert all(e["prefilled"] is True and len(e["data"]) == 16 for e in listed.values())
    # n2's data file cut short: only that file, on that host, is written again
    data = Path(cluster.host("n2").path) / "n2.0" / "db.data.1.dat"
    with open(data, "r+b") as f:
        f.truncate(1 << 20)
    third, _ = run(cluster, tmp_path)
    p3 = third["prefill"]
    assert p3["hosts"]["n2"] == {"files": 1, "bytes": data.stat().st_size,
                                 "reused_files": 1}
    assert p3["hosts"]["n1"]["reused_files"] == 2 and p3["hosts"]["n3"]["reused_files"] == 2
    assert data.stat().st_size > 170 << 20 and third["started_fio"] == ["n2"]
    # another data pattern: every file differs in content, so none is reused
    fourth, _ = run(cluster, tmp_path, data=", data: {compressibility: 2.0}")
    assert fourth["prefill"]["reused_files"] == 0 and fourth["prefill"]["files"] == 6
    # --fresh writes everything again
    fifth, _ = run(cluster, tmp_path, "--fresh", data=", data: {compressibility: 2.0}")
    assert fifth["prefill"]["fresh"] is True and fifth["prefill"]["files"] == 6
    assert all(fifth["prefill"]["hosts"][h]["reused_files"] == 0 for h in hosts)
