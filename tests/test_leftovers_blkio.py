"""`assay clean` on a crashed local run that throttled: its blkio group goes, as named now
(`assay/<run id>.local`, this host of the run) and as runs named it before
(`assay/<run id>`); a live run's group is left alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from assay import leftovers
from assay.hosts import cgroup
from tests.realfs import needs_blkio

FIXTURE = Path(__file__).parent / "fixtures" / "runs" / "exchange-fixture" / "run.json"


def run_dir(root: Path, name: str, pid: int) -> Path:
    """A stored run that says it is running, in process `pid`."""
    d = root / name
    d.mkdir(parents=True)
    record = json.loads(FIXTURE.read_text())
    record.update(id=name, status="running", pid=pid, started=time.time())
    record.pop("boot_id", None)
    (d / "run.json").write_text(json.dumps(record))
    return d


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@needs_blkio
def test_a_crashed_runs_groups_go_and_a_live_ones_stays(tmp_path: Path) -> None:
    crashed, live = "20261128-100000_t_aaaaaa", "20261128-100001_t_bbbbbb"
    run_dir(tmp_path, crashed, dead_pid())
    run_dir(tmp_path, live, os.getpid())
    groups = [cgroup.BLKIO_ROOT / cgroup.group_name(crashed, "local"),
              cgroup.BLKIO_ROOT / "assay" / crashed,
              cgroup.BLKIO_ROOT / cgroup.group_name(live, "local")]
    for g in groups:
        g.mkdir(parents=True)
    try:
        done = leftovers.clean(tmp_path)
        assert [line for line in done if "blkio" in line] == [
            f"removed the blkio group assay/{crashed}.local of crashed run {crashed}",
            f"removed the blkio group assay/{crashed} of crashed run {crashed}"]
        assert [g.exists() for g in groups] == [False, False, True]
    finally:
        for g in groups:
            if g.exists():
                g.rmdir()
