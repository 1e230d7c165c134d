"""kind checkpoint: a model's checkpoint in parallel streams, fsync per file, read back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.hosts import cgroup
from assay.metrics.bursts import Bursts
from assay.plan import builtin_scenarios, plan_text
from assay.scenario.yamlsource import ScenarioInvalid
from tests.conftest import needs_fio, needs_root

MiB = 1 << 20


def plan(workload: str, extra: str = ""):
    return plan_text(f"name: t\nworkloads:\n  ckpt: {workload}\n{extra}", "t.yaml")


def test_a_70b_checkpoint_in_8_streams_each_fsynced_then_read_back() -> None:
    p = plan("{kind: checkpoint, model: llama3-70b, fraction: 0.001}")
    saves = [j for s in p.streams if s.name == "save" for j in s.jobs]
    restores = [j for s in p.streams if s.name == "restore" for j in s.jobs]
    assert len(saves) == len(restores) == 8
    per = 912e9 * 0.001 / 8 // MiB * MiB  # 912 GB (Rules.md Table 2) x fraction, whole MiB
    assert {j.options["size"] for j in saves} == {per}
    assert all(j.options["end_fsync"] == 1 and j.options["time_based"] == 0 for j in saves)
    # each stream reads back its own file once its save has ended
    assert [j.options["wait_for"] for j in restores] == [j.name for j in saves]
    assert [j.options["filename"] for j in restores] == [j.options["filename"] for j in saves]
    assert {c.name for c in p.components} == {"ckpt.save.write", "ckpt.restore.read"}
    assert all(c.timed for c in p.components)


def test_every_saves_again_beside_training() -> None:
    p = plan("{kind: checkpoint, size: 64MiB, streams: 2, at: 10s, every: 20s, "
             "restore: false}", "timeline: {warmup: 5s, duration: 60s}\n")
    saves = [j for s in p.streams for j in s.jobs]
    # at 10 s, 30 s and 50 s of the measured minute, after the 5 s warm-up
    assert sorted({j.options["startdelay"] for j in saves}) == ["15s", "35s", "55s"]
    assert len(saves) == 6 and [s.name for s in p.streams] == ["save"]
    assert p.dataset_bytes == 64 * MiB  # every save overwrites the same files


@pytest.mark.parametrize("workload,message", [
    ("{kind: checkpoint}", "give either `model` or `size`"),
    ("{kind: checkpoint, model: llama3-8b, size: 1GiB}", "give either `model` or `size`"),
    ("{kind: checkpoint, model: llama3-8b, start: 5s}", "start do not apply"),
    ("{kind: checkpoint, model: llama3-8b, fraction: 2}", "must be at most 1"),
    ("{kind: checkpoint, size: 1GiB, at: 2m}", "`at` (120s) is not before the end"),
])
def test_what_a_checkpoint_refuses(workload: str, message: str) -> None:
    with pytest.raises(ScenarioInvalid, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan(workload)


def test_a_burst_is_timed_with_its_edges_at_its_own_rate() -> None:
    b = Bursts()
    # idle, then 0.5 s of a 100 MB/s save in the first second, 2 whole seconds, 0.25 s
    for ios, nbytes in [(0, 0), (5, 50e6), (10, 100e6), (10, 100e6), (3, 25e6), (0, 0)]:
        b.add(ios, int(nbytes), 1.0)
    f = b.figures()
    assert f["busy_max_s"] == pytest.approx(2.75) and f["bursts"] == 1
    assert f["busy_gbps"] == pytest.approx(0.275 / 2.75)


def run(text: str, tmp_path: Path) -> dict:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "assay", "run", str(scenario), "--results",
                           str(tmp_path / "results"), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    run_dir = Path(json.loads(proc.stdout)["run_dir"])
    return {**json.loads((run_dir / "run.json").read_text()), "stderr": proc.stderr}


@needs_fio
def test_the_quick_checkpoint_saves_and_restores(tmp_path: Path) -> None:
    text = builtin_scenarios()["checkpoint-quick"] + f"target: {{path: {tmp_path / 'd'}}}\n"
    record = run(text, tmp_path)
    assert record["status"] == "passed", record["thresholds"]
    save = record["stats"]["ckpt.save.write"]
    assert save["bytes"] == 8 * 125 * MiB  # every byte of the checkpoint, once
    assert record["stats"]["ckpt.restore.read"]["bytes"] == save["bytes"]
    assert "save.write: longest of 1 burst" in record["stderr"]  # the save time, stated


@pytest.mark.tier2  # one of the suite's longest: the second tier
@needs_fio
@needs_root
@pytest.mark.skipif(not cgroup.available(), reason="needs cgroup v1 blkio")
def test_a_throttled_device_makes_the_save_too_slow(loopfs, tmp_path: Path) -> None:
    dev, mnt = loopfs("xfs", "2G")
    cap = 20 * 10**6  # write bytes/s: 1,000 MiB take 52 s, the run lasts 30 s
    text = builtin_scenarios()["checkpoint-quick"] + (
        f"target:\n  path: {mnt}\n  throttle: [{{device: {dev}, write_bps: {cap}}}]\n")
    record = run(text, tmp_path)
    assert record["status"] == "failed"
    by_expr = {r["expr"]: r for r in record["thresholds"]}
    save = by_expr["ckpt.save_s < 20s"]
    assert not save["passed"] and save["observed"] >= 20
    # the device's write cap is what the save achieved
    assert record["stats"]["ckpt.save.write"]["mbps"] == pytest.approx(cap / 1e6, rel=0.15)
