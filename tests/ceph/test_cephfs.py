"""CephFS on the Ceph lab: `assay lab create ceph --cephfs` (an MDS on the first host, a file
system, a ceph-fuse mount on this machine), a run on the CephFS path driven like any
directory, a snapshot that is a real `.snap/<name>` directory, and a destroy that unmounts
and leaves nothing.

One lab for the module (bring-up ~25-40 s), about 2 minutes on a loaded 2-core machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.platforms import cephstate, labcephfs
from assay.results.rundir import read_json, read_ndjson
from tests.ceph.test_lab import needs_ceph
from tests.conftest import needs_fio, verdict_of
from tests.sshlab import needs_netns

needs_cephfs = pytest.mark.skipif(any(shutil.which(t) is None for t in labcephfs.TOOLS),
                                  reason="CephFS is not installed (ceph-mds ceph-fuse)")
pytestmark = [needs_netns, needs_fio, needs_ceph, needs_cephfs, pytest.mark.slow,
              pytest.mark.tier2]

SCENARIO = """\
name: cephfs-snapshot
target:
  platform: ceph
  path: {path}
  options: {{conf: {conf}, keyring: {keyring}, pool: assay}}
workloads:
  db: {{kind: oltp, data_iops: 40, log_iops: 5, read_pct: 70, data_files: 1, log_files: 1,
       dataset: 64MiB}}
timeline:
  duration: 40s
  warmup: 5s
  steps:
    - {{name: snap, action: snapshot, at: 10s}}
thresholds:
  - db.iops >= 90% target
  - db.data.read.lat_p99 < 3s
"""


def assay(root: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_LAB_DIR": str(root)}
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("cephfslabs")
    name = f"f{uuid.uuid4().hex[:6]}"
    made = assay(root, "lab", "create", "ceph", "--hosts", "4", "--cephfs", "--name", name,
                 "--json")
    try:
        assert made.returncode == 0, made.stderr[-3000:]
        yield {**json.loads(made.stdout), "labs": root}
    finally:
        if (root / name).exists():
            assay(root, "lab", "destroy", name)


@pytest.mark.timeout(600)
def test_a_run_on_the_cephfs_path_takes_real_snapshot_directories(
        lab: dict[str, Any], tmp_path: Path) -> None:
    ceph = lab["ceph"]
    mount = Path(ceph["cephfs"])
    assert labcephfs.mounted(str(mount))
    fstype = next(line.split()[2] for line in Path("/proc/mounts").read_text().splitlines()
                  if line.split()[1] == str(mount))
    assert fstype == "fuse.ceph-fuse"
    target = mount / "db"
    scenario = tmp_path / "cephfs.yaml"
    scenario.write_text(SCENARIO.format(path=target, conf=ceph["conf"], keyring=ceph["keyring"]))
    seen: dict[str, list[str]] = {}  # each snapshot seen in .snap -> the files it holds
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.5):
            snaps = target / ".snap"
            for name in (os.listdir(snaps) if snaps.is_dir() else []):
                seen.setdefault(name, sorted(os.listdir(snaps / name)))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        proc = assay(lab["labs"], "run", str(scenario), "--results", str(tmp_path / "results"))
    finally:
        done.set()
        watcher.join()
    assert proc.returncode == 0, verdict_of(proc)
    [run_dir] = [p for p in (tmp_path / "results").iterdir() if (p / "run.json").exists()]
    run = read_json(run_dir / "run.json")  # (beside it: the results' catalogue)
    assert run["status"] == "passed"
    graded = {r["expr"]: r["passed"] for r in run["thresholds"]}
    assert graded and all(graded.values()), graded
    snap = next(e for e in read_ndjson(run_dir / "events.ndjson")
                if e["kind"] == "step" and e["name"] == "snap")
    assert snap["outcome"] == "ok" and f"{target}/.snap/{snap['snapshot']}" in snap["output"]
    # a real CephFS snapshot: the directory appeared under .snap with the run's data files
    assert "db.data.1.dat" in seen.get(snap["snapshot"], []), seen
    assert os.listdir(target / ".snap") == []  # the run's snapshots go when it ends
    rows = cephstate.read(run_dir)  # Ceph's state was recorded beside the run
    assert len(rows) >= 20 and all(r["health"] == "HEALTH_OK" for r in rows[-3:])


def test_a_ceph_path_that_is_not_cephfs_is_refused(lab: dict[str, Any], tmp_path: Path) -> None:
    scenario = tmp_path / "cephfs.yaml"
    ceph = lab["ceph"]
    scenario.write_text(SCENARIO.format(path=tmp_path, conf=ceph["conf"],
                                        keyring=ceph["keyring"]))
    proc = assay(lab["labs"], "run", str(scenario), "--results", str(tmp_path / "results"))
    assert proc.returncode == 2 and "not CephFS" in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert not list(tmp_path.glob("*.dat"))  # refused before any IO


@pytest.mark.timeout(300)
def test_destroy_unmounts_cephfs_and_leaves_nothing(lab: dict[str, Any]) -> None:
    ceph, name = lab["ceph"], lab["name"]
    gone = assay(lab["labs"], "lab", "destroy", name)
    assert gone.returncode == 0 and "unmounted CephFS" in gone.stdout, gone.stdout
    assert not labcephfs.mounted(ceph["cephfs"])
    alive = subprocess.run(["pgrep", "-f", ceph["conf"]], capture_output=True, text=True)
    assert alive.stdout.strip() == ""  # no MDS, no ceph-fuse, no other daemon
    assert ceph["root"] not in Path("/proc/mounts").read_text()
    assert not Path(ceph["root"]).exists()
