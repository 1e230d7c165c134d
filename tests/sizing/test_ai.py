"""`assay size ai`: read throughput and capacity for N accelerators, and the scenario."""

import json
import subprocess

import pytest
from click.testing import CliRunner

from assay.cli.size import command
from assay.plan import plan_text
from tests.conftest import assay_in_process

MiB = 1 << 20


def size(*args: str):
    return CliRunner().invoke(command, ["ai", *args], catch_exceptions=False)


def test_64_h100s_on_unet3d_need_what_the_arithmetic_says(tmp_path) -> None:
    out = tmp_path / "ai.yaml"
    r = size("--accelerators", "64", "--model", "unet3d", "--accelerator", "h100",
             "--hosts", "8", "--memory", "512GB", "--json", "--emit-scenario", str(out))
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    figures = {k: f["value"] for k, f in doc["figures"].items()}
    # 64 x 7 samples of 140 MiB every 0.323 s
    demand = 64 * 7 * 140 * MiB / 0.323
    assert figures["read_throughput"] == pytest.approx(demand / 1e9)
    assert figures["read_at_au"] == pytest.approx(0.9 * demand / 1e9)
    assert figures["per_host"] == pytest.approx(demand / 8 / 1e9)
    assert figures["samples_s"] == pytest.approx(64 * 7 / 0.323)
    # 500 steps of 64 x 7 samples of 140 MiB (32.9 TB) outweigh 5 x 8 hosts x 512 GB
    assert figures["capacity"] == pytest.approx(500 * 64 * 7 * 140 * MiB / 1e9)
    assert figures["capacity"] > 5 * 8 * 512
    # the emitted scenario is one host's share and plans as written
    plan = plan_text(out.read_text(), str(out))
    (c,) = plan.components
    assert c.training is not None and c.training.accelerators == 8
    assert [t.text for t in plan.thresholds] == ["train.au >= target"]
    assert plan.dataset_bytes >= 5 * 512e9


def test_what_size_ai_refuses() -> None:
    def assay(*args: str) -> subprocess.CompletedProcess[str]:  # in-process: no start-up
        return assay_in_process("size", "ai", *args)

    r = assay("--accelerators", "10", "--hosts", "4")
    assert r.returncode == 2 and "identical count on every host" in r.stderr
    r = assay("--accelerators", "8", "--model", "resnet50", "--accelerator", "b200")
    assert r.returncode == 2 and "no published compute time" in r.stderr
    assert "Traceback" not in r.stderr
