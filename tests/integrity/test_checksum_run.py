"""Jetstress' checksum pass over the workload's own data, end to end with real fio: a verified
run's data files are all whole (a `verify` step while fio writes, the final pass and `assay
verify` find 0 corrupt blocks), and 5 bytes flipped afterwards in `db.data.1.dat` are 5
corrupt blocks, found by `assay verify` at those offsets; the thresholds count them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.integrity.session import section
from assay.scenario.models import IntegritySpec
from assay.thresholds.evaluate import integrity_result
from assay.thresholds.grammar import parse

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

SCENARIO = """name: checksum-pass
target: {{path: {target}}}
integrity: {{size: 4MiB, rate: 20}}
workloads:
  db: {{kind: oltp, data_iops: 300, log_iops: 20, dataset: 32MiB}}
timeline:
  duration: 8s
  warmup: 1s
  steps:
    - {{name: check, action: verify, at: 1s}}  # 7 s to finish on a loaded machine
thresholds:
  integrity.corrupt: "== 0"
  integrity.db.corrupt: "== 0"
"""
BS = 8192
# in the magic, the header's offset field, the data CRC, the data, the file's last byte
FLIPS = [0, 9 * BS + 17, 100 * BS + 41, 700 * BS + 5000]


def assay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True,
                          text=True, check=False, timeout=300)


def flip(path: Path, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0xA5]))


@pytest.fixture(scope="module")
def verified(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    tmp = tmp_path_factory.mktemp("checksum")
    (tmp / "s.yaml").write_text(SCENARIO.format(target=tmp / "target"))
    proc = assay("run", str(tmp / "s.yaml"), "--results", str(tmp / "results"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = next(p for p in (tmp / "results").iterdir() if (p / "run.json").is_file())
    return run_dir, json.loads((run_dir / "run.json").read_text()), proc.stdout


def test_an_undisturbed_run_has_no_corrupt_block(
        verified: tuple[Path, dict[str, Any], str]) -> None:
    run_dir, run, summary = verified
    sec = run["integrity"]
    files = {f["path"]: f for f in sec["data_files"]}
    assert set(files) == {f"db.data.{i}.dat" for i in range(1, 5)} | {"db.log.1.dat",
                                                                     "db.log.2.dat"}
    blocks = sum(f["size"] // f["interval"] for f in files.values())
    labels = [p["label"] for p in sec["passes"]]
    assert labels == ["check#1", "final"]  # the step ran while fio wrote, then the final pass
    for p in sec["passes"]:
        d = p["data_files"]
        assert p["status"] == "completed" and d["checked"] == d["blocks"] == blocks
        assert d["corrupt"] == d["unreadable"] == 0 and d["ok"] == blocks
    assert sec["corrupt"] == 0 and sec["workloads"]["db"]["corrupt"] == 0
    assert f"final: data files: {blocks:,} of {blocks:,} blocks checksummed in 6 files, 0 " \
        "corrupt, 0 unreadable" in " ".join(summary.split())
    graded = {t["expr"]: t for t in run["thresholds"]}
    assert run["status"] == "passed"
    assert run["verdict"] == {"passed": 2, "failed": 0, "not_graded": 0}
    assert graded["integrity.db.corrupt == 0"]["observed"] == 0
    proc = assay("verify", str(run_dir), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "passed" and doc["pass"]["data_files"]["checked"] == blocks


def test_five_flipped_bytes_are_five_corrupt_blocks_at_their_offsets(
        verified: tuple[Path, dict[str, Any], str]) -> None:
    run_dir, run, _ = verified
    data = Path(run["target"]["path"]) / "db.data.1.dat"
    flips = FLIPS + [data.stat().st_size - 1]
    for offset in flips:
        flip(data, offset)
    proc = assay("verify", str(run_dir))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "corrupt: 5" in proc.stdout and f"db.data.1.dat@{9 * BS}" in proc.stdout
    doc = json.loads((run_dir / "verify.json").read_text())
    p = doc["pass"]
    assert doc["status"] == "failed" and p["corrupt"] == 5
    assert p["lost"] == p["stale"] == p["unreadable"] == 0  # the journal's blocks are whole
    found = p["data_files"]["workloads"]["db"]["offsets"]
    assert [(o["file"], o["offset"]) for o in found] == \
        [("db.data.1.dat", o // BS * BS) for o in flips]
    assert [o["fault"] for o in found] == ["no header", "header checksum", "data checksum",
                                           "data checksum", "data checksum"]
    for offset in flips:  # flipped back: the same file is whole again
        flip(data, offset)
    assert assay("verify", str(run_dir)).returncode == 0


def test_the_integrity_thresholds_count_the_data_files() -> None:
    passes = [{"label": "final", "status": "completed", "lost": 0, "stale": 0, "corrupt": 2,
               "unreadable": 0, "workloads": {"db": {"lost": 0, "stale": 0, "corrupt": 0,
                                                     "unreadable": 0}},
               "data_files": {"corrupt": 2, "unreadable": 0, "workloads": {
                   "db": {"corrupt": 2, "unreadable": 0, "offsets": [
                       {"file": "db.data.2.dat", "offset": 8192, "state": "corrupt"}]}}}}]
    sec = section(IntegritySpec(), True, [], passes, "verified")
    assert sec["workloads"]["db"]["corrupt"] == 2
    for text in ("integrity.corrupt == 0", "integrity.db.corrupt == 0"):
        result = integrity_result(parse(text), sec)
        assert not result.passed and result.observed == 2
        assert result.note == "first at offset db.data.2.dat@8192"


FLIP = """import sys
with open(sys.argv[1], "r+b") as f:
    for offset in map(int, sys.argv[2:]):
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0xA5]))
"""
MID_RUN = """name: checksum-mid-run
target: {{path: {target}}}
integrity: {{size: 1MiB, rate: 10}}
workloads:
  db: {{kind: oltp, data_iops: 40, log_iops: 4, dataset: 32MiB}}
timeline:
  duration: 8s
  steps:
    - name: flip
      action: command
      at: 1s
      run: "{python} {script} {{path}}/db.data.2.dat {offsets}"
    - {{name: check, action: verify, after: flip}}
thresholds:
  integrity.corrupt: "== 0"
"""


def test_the_verify_step_finds_bytes_flipped_while_fio_writes(tmp_path: Path) -> None:
    blocks = [10, 100, 300, 600, 890]  # of 896 in db.data.2.dat
    (tmp_path / "flip.py").write_text(FLIP)
    (tmp_path / "s.yaml").write_text(MID_RUN.format(
        target=tmp_path / "target", python=sys.executable, script=tmp_path / "flip.py",
        offsets=" ".join(str(b * BS + 1000) for b in blocks)))
    proc = assay("run", str(tmp_path / "s.yaml"), "--results", str(tmp_path / "results"))
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the threshold counts them
    run_dir = next(p for p in (tmp_path / "results").iterdir() if (p / "run.json").is_file())
    run = json.loads((run_dir / "run.json").read_text())
    steps = {e["name"]: e for e in map(json.loads, (run_dir / "events.ndjson").read_text()
                                           .splitlines()) if e.get("kind") == "step"}
    assert steps["flip"]["outcome"] == "ok" and steps["check"]["outcome"] == "ok"
    flipped = {("db.data.2.dat", b * BS) for b in blocks}
    mid = {(o["file"], o["offset"]) for o in steps["check"]["data_files"]["offsets"]}
    # ~5 writes/s per file over 896 blocks: fio rewrites one of them within a second rarely
    assert mid <= flipped and len(mid) >= 4, steps["check"]
    final = run["integrity"]["passes"][-1]
    assert final["label"] == "final" and final["lost"] == final["stale"] == 0
    assert {(o["file"], o["offset"])
            for o in final["data_files"]["workloads"]["db"]["offsets"]} <= flipped
    graded = {t["expr"]: t for t in run["thresholds"]}
    assert graded["integrity.corrupt == 0"]["observed"] == len(mid)  # the worst pass
