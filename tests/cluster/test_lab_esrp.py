"""The scenario `assay size exchange --emit-load cluster` writes, run as is on a real 3-host lab
(sshd in network namespaces, real fio): every server's Jetstress load on its own host, the
last server lost at the middle, its databases activated on the survivors, Jetstress' strict
thresholds before and after the loss."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.platforms.labcluster import Cluster
from assay.results.blocklog import read_rows
from tests.cluster.test_lab import assay
from tests.cluster.test_lab_failover import run_lab
from tests.conftest import needs_fio
from tests.sshlab import cluster, needs_netns  # noqa: F401

pytestmark = [needs_netns, needs_fio, pytest.mark.tier2]  # 50 s of load, 1 GiB of prefill

SEED = ["--mailboxes", "60000", "--messages", "150", "--mailbox-size", "800MB", "--servers",
        "3", "--copies", "2", "--databases-per-server", "2"]


def db_iops(run_dir: Path, lo: float, hi: float) -> float:
    rows = [r for r in read_rows(run_dir, "series")
            if r["c"] in ("mail.db.read", "mail.db.write") and lo < r["t"] <= hi]
    seconds = {r["t"] for r in rows}
    assert seconds, (lo, hi)
    return sum(r["iops"] for r in rows) / len(seconds)


def test_the_emitted_esrp_cluster_scenario_runs_on_the_lab_as_is(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    scenario = tmp_path / "esrp.yaml"
    r = assay("size", "exchange", *SEED, "--emit-load", "cluster", "--emit-iops", "150",
              "--emit-dataset", "96MiB", "--emit-duration", "50s", "--emit-scenario",
              str(scenario))
    assert scenario.exists(), r.stdout[-2000:] + r.stderr[-2000:]
    rec, run_dir = run_lab(cluster, tmp_path, scenario.read_text(), timeout=300)
    c = rec["cluster"]
    strict = [t for t in rec["thresholds"]]
    assert len(strict) >= 10 and {t["expr"].rsplit(" ", 1)[-1] for t in strict} >= \
        {"before", "host_fail"}
    # Jetstress' strict set graded before and after the loss; the restarts did IO and the
    # rates hold within 10 % (a loaded 2-core lab may miss the strict latencies, or the
    # strict "achieved >= target" by a few %, before or after the loss: that is the
    # platform's verdict)
    failed = [t for t in strict + c["thresholds"] if not t["passed"]]
    phases = {"before": rec["phase_totals"]["before"]["stats"],
              "host_fail": rec["phase_totals"]["after"]["stats"]}
    assert rec["status"] in ("passed", "failed") and all(
        t["metric"].startswith("lat") or t["metric"] == "iops" and t["observed"] >= 0.9 *
        phases[t["expr"].rsplit(" ", 1)[-1]][t["component"]]["target_iops"]
        for t in failed), failed
    assert list(c["lost"]) == ["n3"]
    # n3's two parts, one activated on each survivor
    moved = sorted(c["failover"], key=lambda m: m["host"])
    assert [(m["host"], m["from"]) for m in moved] == [("n1", "n3"), ("n2", "n3")]
    assert all(m["ios"] > 0 and m["gap_s"] is not None for m in moved), moved
    # the survivors step up to their N-1 load: the cluster is back at 3 servers' IOPS
    loss = c["lost"]["n3"]["t"]
    before = db_iops(run_dir, 7.0, loss)
    between = db_iops(run_dir, loss + 1.5, min(m["first_io_s"] for m in moved) - 0.5)
    after = db_iops(run_dir, max(m["first_io_s"] for m in moved) + 1.5, 55.0)
    assert 0.55 < between / before < 0.85, (before, between)  # 2 of 3 servers
    assert after > 0.9 * before and after > 1.25 * between, (before, between, after)
    lat = {t["expr"]: t["observed"] for t in strict if t["metric"] == "lat_avg"}
    print(f"ESRP on the lab: {rec['status']} ({lat}); DB IOPS {before:.0f} (3 servers), "
          f"{between:.0f} after the loss, {after:.0f} with n3's databases activated on n1 "
          f"and n2 (gaps {', '.join(str(m['gap_s']) for m in moved)} s)")
