"""kind ai-training: MLPerf Storage's presets, its data-set rule, and AU on real fio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.hosts import cgroup
from assay.plan import plan_text
from assay.scenario.yamlsource import ScenarioInvalid
from assay.workloads.ai_training import MODELS
from tests.conftest import needs_fio, needs_root

MiB = 1 << 20


def plan(workload: str, extra: str = ""):
    return plan_text(f"name: t\nworkloads:\n  train: {workload}\n{extra}", "t.yaml")


def test_unet3d_on_h100_reads_seven_140mib_samples_every_0_323_s() -> None:
    p = plan("{kind: ai-training, model: unet3d, accelerators: 2, memory: 1GiB}")
    (c,) = p.components
    assert c.training is not None
    assert c.training.batch_bytes == 7 * 140 * MiB  # 146.6 MB rounded up to whole MiB
    assert c.training.compute_s == 0.323 and c.training.au_target == 90.0
    # 2 accelerators x 4 readers, each at an eighth of the demand, 1 MiB sequential reads
    jobs = [j for s in p.streams for j in s.jobs]
    assert len(jobs) == 8
    demand = 2 * 7 * 140 * MiB / 0.323
    assert sum(j.options["rate"] for j in jobs) == pytest.approx(demand, rel=1e-6)
    assert c.target_iops == pytest.approx(demand / MiB)
    # every reader reads its own share of the files, whole files one after another
    names = [n for j in jobs for n in str(j.options["filename"]).split(":")]
    assert len(names) == len(set(names)) == p.file_count
    # the sample files are one set, laid out by one prefill job
    assert p.file_sets == {"train.data.$filenum.npz": p.file_count}
    assert {j.options["file_service_type"] for j in jobs} == {"sequential"}
    # default data set: 5 x the memory given, in whole sample files
    assert p.dataset_bytes >= 5 * (1 << 30) and p.file_count == -(-5 * 1024 // 140)


def test_presets_carry_dlios_published_parameters() -> None:
    assert MODELS["resnet50"].batch_size == 400 and MODELS["resnet50"].readers == 8
    assert MODELS["cosmoflow"].au_target == 70.0
    p = plan("{kind: ai-training, model: cosmoflow, accelerator: a100, memory: 64MiB}",
             "thresholds:\n  train: mlperf\n")
    assert p.components[0].training.compute_s == 0.00551
    assert [t.text for t in p.thresholds] == ["train.au >= target"]


def test_an_accelerator_without_a_published_time_is_refused() -> None:
    with pytest.raises(ScenarioInvalid, match="no published compute time for resnet50 on b200"):
        plan("{kind: ai-training, model: resnet50, accelerator: b200, memory: 64MiB}")
    p = plan("{kind: ai-training, model: resnet50, accelerator: b200, compute_time: 0.1, "
             "memory: 64MiB}")
    assert p.components[0].training.compute_s == 0.1


def test_a_data_set_below_5x_memory_is_refused_unless_warned() -> None:
    with pytest.raises(ScenarioInvalid) as e:
        plan("{kind: ai-training, model: unet3d, dataset: 2GiB, memory: 1GiB}")
    text = str(e.value)
    assert "t.yaml:3" in text and "workloads.train" in text
    assert "below 5 × the host's memory (1GiB)" in text and "dataset_rule: warn" in text
    p = plan("{kind: ai-training, model: unet3d, dataset: 2GiB, memory: 1GiB, "
             "dataset_rule: warn}")
    assert any("warned, not refused" in n for n in p.notes)
    assert p.dataset_bytes == 14 * 140 * MiB  # 2 GiB in whole 140 MiB files
    ok = plan("{kind: ai-training, model: unet3d, dataset: 6GiB, memory: 1GiB}")
    assert not any("5 × the host's memory" in n for n in ok.notes)


def test_load_scale_scales_the_accelerators_not_their_speed() -> None:
    p = plan("{kind: ai-training, model: unet3d, accelerators: 2, memory: 64MiB, "
             "load: {scale: 0.5}}")
    (c,) = p.components
    assert c.training.accelerators == 1.0
    assert c.target_iops == pytest.approx(7 * 140 / 0.323)


def run(scenario: str | Path, results: Path, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "assay", "run", str(scenario), "--results",
                           str(results), "--json", *args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    run_dir = Path(json.loads(proc.stdout)["run_dir"])
    return {**json.loads((run_dir / "run.json").read_text()), "run_dir": str(run_dir),
            "stderr": proc.stderr}


def hand_count(run_dir: Path, window: tuple[float, float], batch: float, compute: float,
               accelerators: float) -> float:
    """AU from the stored per-second samples, when every second fell short of the demand
    (nothing queued): batches delivered × compute time / (accelerators × seconds)."""
    rows = [json.loads(line) for line in (run_dir / "samples.ndjson").open()]
    mine = [r for r in rows if r["c"] == "train.data.read"
            and window[0] <= r["t"] - r["dt"] / 2 <= window[1]]
    return 100 * sum(r["bytes"] for r in mine) / batch * compute / (
        accelerators * sum(r["dt"] for r in mine))


@pytest.mark.tier2  # one of the suite's longest: the second tier
@needs_fio
def test_the_quick_scenario_keeps_its_accelerator_busy(tmp_path: Path) -> None:
    record = run("ai-unet3d-quick", tmp_path / "results", "--path", str(tmp_path / "data"))
    stats = record["stats"]["train.data.read"]["training"]
    assert record["status"] == "passed", record["thresholds"]
    assert stats["au"] >= 90 and stats["samples_s"] > 0
    assert stats["batch_wait_p50"] is not None
    assert "data.read: AU " in record["stderr"]  # the summary speaks in accelerators


CAP = 80 * 10**6  # read bytes/s the device gives fio
THROTTLED = """\
name: ai-throttled
target:
  path: {mnt}
  throttle: [{{device: {dev}, read_bps: {cap}}}]
workloads:
  train: {{kind: ai-training, model: unet3d, accelerator: a100, batch_size: 1,
          dataset: 1GiB, dataset_rule: warn}}
timeline: {{warmup: 8s, duration: 12s}}
thresholds:
  train: mlperf
"""


@needs_fio
@needs_root
@pytest.mark.skipif(not cgroup.available(), reason="needs cgroup v1 blkio")
def test_a_throttled_device_fails_au_by_the_arithmetic(loopfs, tmp_path: Path) -> None:
    dev, mnt = loopfs("xfs", "2G")
    scenario = tmp_path / "t.yaml"
    scenario.write_text(THROTTLED.format(mnt=mnt, dev=dev, cap=CAP))
    record = run(scenario, tmp_path / "results")
    assert record["status"] == "failed"
    (result,) = record["thresholds"]
    assert result["expr"] == "train.au >= target" and not result["passed"]
    au = record["stats"]["train.data.read"]["training"]["au"]
    sample = 140 * MiB
    demand = sample / 0.636  # batch of 1 on an A100: 231 MB/s
    # what the capacity allows, and the same figure counted by hand from the samples
    assert au == pytest.approx(100 * CAP / demand, abs=8)
    run_dir = Path(record["run_dir"])
    assert au == pytest.approx(hand_count(run_dir, (8.0, 20.0), sample, 0.636, 1.0), abs=0.5)
    # each batch waited about (demand / capacity - 1) x the compute time
    wait = record["stats"]["train.data.read"]["training"]["batch_wait_p50"]
    assert wait == pytest.approx((demand / CAP - 1) * 636, rel=0.3)
