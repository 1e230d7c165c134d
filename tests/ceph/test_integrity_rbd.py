"""Integrity mode on RBD images, end to end on the hyper-converged Ceph lab: the built-in
`ceph-rebuild` with integrity on. Each node's agent writes journaled blocks to an RBD image of
its own through librbd (cache off) while an OSD fails and Ceph rebuilds its copies; every block
is verified on every node after the rebuild and at the end: 0 lost, stale or corrupt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.platforms import labceph
from assay.platforms.labceph import CephLab
from assay.platforms.labcluster import Cluster
from assay.results.rundir import read_json, read_ndjson
from tests.ceph.test_lab import needs_ceph
from tests.conftest import needs_fio, verdict_of
from tests.sshlab import needs_netns

pytestmark = [needs_netns, needs_fio, needs_ceph, pytest.mark.slow, pytest.mark.tier2]

BLOCKS = (32 << 20) // 8192  # the scenario's integrity: {size: 32MiB}, 8k blocks
HOSTS = ("n1", "n2", "n3", "n4")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, CephLab, Path]]:
    root = tmp_path_factory.mktemp("cephlabs")
    c, ceph_lab = labceph.create(f"i{uuid.uuid4().hex[:6]}", 4, root)
    try:
        yield c, ceph_lab, root
    finally:
        if Path(c.root).exists():
            labceph.destroy(c)


@pytest.mark.timeout(900)
def test_ceph_rebuild_with_integrity_loses_and_corrupts_no_block(
        lab: tuple[Cluster, CephLab, Path], tmp_path: Path) -> None:
    c, ceph_lab, root = lab
    labceph.wait_healthy(ceph_lab, 4, 300)
    results = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-m", "assay", "run", "ceph-rebuild", "--lab", c.name,
                           "--results", str(results), "--duration", "150s", "--json"],
                          capture_output=True, text=True, timeout=800,
                          env={**os.environ, "ASSAY_LAB_DIR": str(root)})
    assert proc.returncode == 0, verdict_of(proc)
    run_dir = Path(json.loads(proc.stdout)["run_dir"])
    run = read_json(run_dir / "run.json")
    assert run["status"] == "passed"
    steps = {e["name"]: e for e in read_ndjson(run_dir / "events.ndjson") if e["kind"] == "step"}
    assert steps["fail-osd"]["outcome"] == "ok" and steps["rebuild"]["outcome"] == "ok"
    section = run["integrity"]
    assert section["status"] == "verified"
    assert [p["label"] for p in section["passes"]] == ["verify-rebuilt#1", "final"]
    # the pass after the rebuild ran once every PG was active+clean again
    assert steps["verify-rebuilt"]["t_start"] >= steps["rebuild"]["t_end"] - 0.5
    for p in section["passes"]:
        assert p["status"] == "completed" and set(p["hosts"]) == set(HOSTS)
        assert p["checked"] == p["blocks"] == 4 * BLOCKS and p["ok"] == 4 * BLOCKS
        assert p["lost"] == p["stale"] == p["corrupt"] == p["unreadable"] == 0
    for f in section["files"]:  # an image per node, written through librbd during the rebuild
        assert f["path"].startswith(f"rbd:{ceph_lab.pool}/assay.ceph-rebuild.{f['host']}.")
        assert f["acknowledged"] > 0 and f["write_errors"] == 0 and f["journal_back"]
    thresholds = {t["expr"]: t for t in run["thresholds"]}
    assert thresholds["integrity.lost == 0"]["passed"]
    assert thresholds["integrity.corrupt == 0"]["passed"]
    # the driver removed the images it made for the blocks, as it does the workload's
    listed = subprocess.run(["rbd", "-c", ceph_lab.conf, "ls", "-p", ceph_lab.pool], text=True,
                            capture_output=True, check=True).stdout.split()
    assert not [i for i in listed if "integrity" in i], listed
    labceph.wait_healthy(ceph_lab, 4, 300)
