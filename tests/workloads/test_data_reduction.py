"""Data realism on a real platform: written data compresses as the scenario says."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.conftest import needs_fio, needs_root

pytestmark = [needs_fio, needs_root]

SCENARIO = """\
name: compressible
workloads:
  db:
    kind: oltp
    data_iops: 200
    log_files: 0
    dataset: 128MiB
    data: {{compressibility: {ratio}}}
timeline: {{duration: 2s}}
"""


def disk_share(path) -> int:
    """compsize's TOTAL percentage: disk usage / uncompressed size."""
    out = subprocess.run(["compsize", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return int(re.search(r"^TOTAL\s+(\d+)%", out, re.M).group(1))


@pytest.mark.skipif(shutil.which("compsize") is None, reason="compsize is not installed")
@pytest.mark.parametrize("ratio,low,high", [(1, 95, 100), (2, 40, 65), (4, 15, 40)])
def test_btrfs_compresses_the_dataset_by_the_declared_ratio(loopfs, run_scenario, ratio, low,
                                                            high):
    dev, mnt = loopfs("btrfs", "1G")
    subprocess.run(["mount", "-o", "remount,compress=zstd", str(mnt)], check=True)
    target = mnt / "data"
    outcome, run = run_scenario(SCENARIO.format(ratio=ratio), target_dir=target)
    assert outcome.status == "completed", run["reason"]  # no thresholds: nothing graded
    subprocess.run(["sync"], check=True)
    assert low <= disk_share(target) <= high
