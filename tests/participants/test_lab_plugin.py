"""docs/extending.md's participant plug-in, installed as pip would, in real runs: on this
machine and on the lab's 3 hosts (sshd in network namespaces, real fio), the same module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import needs_fio
from tests.docs.test_extending import FILES
from tests.plugin_dist import write
from tests.sshlab import cluster, needs_netns  # noqa: F401

SCENARIO = """\
name: lab-plugin
workloads:
  db: {kind: oltp, data_iops: 200, log_files: 0, dataset: 16MiB}
timeline: {warmup: 2s, duration: 8s}
thresholds:
  db.data.read.lat_p99: "< 10s"
"""


def assay_with_plugin(tmp_path: Path, *args: str) -> dict:
    root = tmp_path / "plugin"
    if not root.exists():
        write(root, tomllib.loads(FILES["pyproject.toml"])["project"]["entry-points"], FILES,
              name="assay-randmix")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    r = subprocess.run([sys.executable, "-m", "assay", "run", str(scenario), "--json",
                        "--results", str(tmp_path / "results"), *args],
                       capture_output=True, text=True, timeout=240, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads((Path(json.loads(r.stdout)["run_dir"]) / "run.json").read_text())


@needs_fio
def test_the_plugin_participant_runs_beside_a_local_run(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    rec = assay_with_plugin(tmp_path, "--path", str(target))
    section = rec["participants"]["meminfo"]
    assert rec["status"] == "passed" and section["samples"] >= 4
    assert set(section["peak_bytes"]) == {"local"}
    assert set(section["peak_bytes"]["local"]) == {"Dirty", "Writeback"}


@needs_netns
@needs_fio
@pytest.mark.tier2
def test_the_same_plugin_runs_on_every_host_of_the_lab(cluster, tmp_path: Path) -> None:  # noqa: F811
    rec = assay_with_plugin(tmp_path, "--hosts", cluster.inventory)
    section = rec["participants"]["meminfo"]
    assert rec["status"] == "passed" and section["samples"] >= 4
    assert set(section["peak_bytes"]) == {"n1", "n2", "n3"}
    for host, peak in section["peak_bytes"].items():
        assert set(peak) == {"Dirty", "Writeback"}, host
