"""A raw block device as a host's target (`assay_device`), end to end on the lab cluster:
driven like a local device, and refused before any IO when it holds a filesystem."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from assay.platforms.labcluster import Cluster
from tests.cluster.test_lab import assay, inventory
from tests.conftest import needs_fio
from tests.sshlab import cluster, needs_netns  # noqa: F401

# lab runs end to end: make test's second tier
pytestmark = [needs_netns, needs_fio, pytest.mark.tier2]

SCENARIO = """\
name: lab-device
workloads:
  db: {kind: oltp, data_iops: 100, read_pct: 70, data_files: 1, log_files: 1, log_iops: 10,
       dataset: 32MiB}
timeline: {warmup: 0s, duration: 5s}
thresholds:
  db.data.read.iops: ">= 50% target"
"""


@contextmanager
def loop_device(tmp_path: Path, fs: str | None = None) -> Iterator[str]:
    image = tmp_path / f"dev-{uuid.uuid4().hex[:6]}.img"
    with open(image, "wb") as f:
        f.truncate(64 << 20)
    dev = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True,
                         text=True, check=True).stdout.strip()
    try:
        if fs:
            subprocess.run([f"mkfs.{fs}", "-q", "-F", dev], check=True, capture_output=True)
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
        image.unlink(missing_ok=True)


def test_a_hosts_raw_device_is_driven_and_one_holding_a_filesystem_refused_before_io(
        cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    n2 = cluster.host("n2")
    scenario = tmp_path / "device.yaml"
    scenario.write_text(SCENARIO)
    with loop_device(tmp_path) as blank, loop_device(tmp_path, "ext4") as holding:
        inv = inventory(cluster, tmp_path, n2=f"n2 ansible_host={n2.address} "
                                              f"assay_device={blank}")
        r = assay("run", str(scenario), "--hosts", str(inv), "--results",
                  str(tmp_path / "results"), "--json", timeout=300)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        run_dir = Path(json.loads(r.stdout)["run_dir"])
        rec = json.loads((run_dir / "run.json").read_text())
        assert rec["status"] == "passed"
        facts = rec["cluster"]["hosts"]["n2"]
        assert facts["device"] == blank and facts["device_bytes"] == 64 << 20
        assert facts["kernel"] and facts["fs"] == "raw device"
        assert rec["cluster"]["graded"]["n2"]["ios"] > 0
        assert f"filename={blank}" in (run_dir / "hosts" / "n2" / "run.fio").read_text()
        with open(blank, "rb") as f:  # the prefill laid the host's files out on the device
            assert f.read(1 << 20).count(0) < (1 << 20) // 2
        assert not list(Path(n2.path).glob("n2.0"))  # nothing in the host's directory
        # a device holding a filesystem: refused on the host, naming it, before any IO
        inv = inventory(cluster, tmp_path, n2=f"n2 ansible_host={n2.address} "
                                              f"assay_device={holding}")
        r = assay("run", str(scenario), "--hosts", str(inv), "--results",
                  str(tmp_path / "results"))
        assert r.returncode == 2, r.stdout[-3000:] + r.stderr[-3000:]
        said = r.stdout + r.stderr
        assert f"n2: refusing to write to {holding}: it type ext4" in said, said
        assert "Traceback" not in said
        blkid = subprocess.run(["blkid", "-p", "-o", "value", "-s", "TYPE", holding],
                               capture_output=True, text=True, check=False)
        assert blkid.stdout.strip() == "ext4"  # untouched
