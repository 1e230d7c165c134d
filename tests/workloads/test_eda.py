"""kind eda: EDA-like job sets, a metadata-heavy frontend and a sequential backend."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.plan import plan_text
from tests.conftest import needs_fio


def plan(workload: str, extra: str = ""):
    return plan_text(f"name: t\nworkloads:\n  e: {workload}\n{extra}", "t.yaml")


def test_a_job_set_is_450_operations_a_second() -> None:
    p = plan("{kind: eda, job_sets: 2, dataset: 512MiB}")
    targets = {c.name: c.target_iops for c in p.components}
    assert sum(targets.values()) == 2 * 450
    front = sum(v for k, v in targets.items() if ".fe_" in k)
    back = sum(v for k, v in targets.items() if ".be_" in k)
    assert (front, back) == (2 * 300, 2 * 150)  # 3 x 100 and 2 x 75 op/s per job set
    be = next(s for s in p.streams if s.name == "be_read").jobs[0].options
    assert be["filesize"] == 10 << 20 and be["bs"] == "32k"
    assert be["file_service_type"] == "sequential"
    create = next(s for s in p.streams if s.name == "fe_create").jobs[0].options
    assert create["rate_iops"] == 38 and create["ioengine"] == "filecreate"
    assert "file_service_type" not in create  # new names in order, each once


def test_the_data_set_grows_with_the_job_sets() -> None:
    one = plan("{kind: eda, job_sets: 1}").dataset_bytes
    assert one == pytest.approx(11 << 30, rel=0.01)  # SFS 2014: 11 GiB per job set
    assert plan("{kind: eda, job_sets: 3}").dataset_bytes == pytest.approx(3 * one, rel=0.01)


@needs_fio
def test_every_operation_is_counted_at_about_its_rate_on_real_fio(tmp_path: Path) -> None:
    scenario = tmp_path / "e.yaml"
    scenario.write_text(f"name: eda-run\ntarget: {{path: {tmp_path / 'd'}}}\nworkloads:\n"
                        f"  e: {{kind: eda, job_sets: 1, dataset: 128MiB, "
                        f"load: {{pacing: even}}}}\n"
                        f"timeline: {{warmup: 3s, duration: 10s}}\n")
    proc = subprocess.run([sys.executable, "-m", "assay", "run", str(scenario), "--results",
                           str(tmp_path / "results"), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    run = json.loads((Path(json.loads(proc.stdout)["run_dir"]) / "run.json").read_text())
    for name, s in run["stats"].items():
        # a loaded 2-core machine: within 15 % of each rate (the `rate` preset is stricter)
        assert s["iops"] == pytest.approx(s["target_iops"], rel=0.15), name
