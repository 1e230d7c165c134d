"""Integrity mode end to end on a faulty XFS lab (real fio, XFS, loop devices over the FUSE
fault server): bytes flipped in the backing file mid-run are found and located by the `verify`
step, the final pass and `assay verify`; thresholds fail; Ctrl-C during `assay verify` leaves
verify.json `interrupted`."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.integrity.journal import Journal
from assay.platforms import faulty
from assay.platforms import lab as labs
from tests.platforms.test_faulty import skip_without_fuse
from tests.platforms.test_lab import assay, last_run, mkfs_missing

BS = 8192
FLIPPED = [3, 40, 41, 500, 1000, 1500, 2047, 2048, 3000, 4095]  # of 4096 blocks (32 MiB)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[labs.Lab, Path]]:
    skip_without_fuse()
    if mkfs_missing("xfs"):
        pytest.skip("mkfs.xfs is not installed")
    lab_dir = tmp_path_factory.mktemp("labs")
    assay("lab", "create", "xfs", "--faulty", "--size", "320MiB", "--name", "fx", lab_dir=lab_dir)
    try:
        yield labs.load("fx", lab_dir), lab_dir
    finally:
        assay("lab", "destroy", "--all", lab_dir=lab_dir, check=False)


def scenario(tmp: Path, made: labs.Lab, steps: str = "") -> Path:
    image = Path(made.root) / "store" / Path(made.served[0]).name
    text = f"""
name: integrity-flip
integrity: {{size: 32MiB, rate: 20}}
workloads:
  db: {{kind: oltp, data_iops: 200, log_iops: 20, dataset: 48MiB}}
timeline:
  duration: 10s  # graded at least 95 % of it: a FUSE device beside another run lags its start
  steps:
{steps.format(flip=f"{sys.executable} {Path(__file__).parent.parent / 'integrity' / 'flip.py'}",
              file="{path}/assay-integrity/db.blk", image=image, out=tmp / 'flipped.txt')}
thresholds:
  integrity.corrupt: "== 0"
  integrity.lost: "== 0"
"""
    (tmp / "s.yaml").write_text(text)
    return tmp / "s.yaml"


FLIP_STEPS = ("    - {{name: flip, action: command, at: 2s, run: \"{flip} {file} {image} {out} "
              "8192 " + " ".join(map(str, FLIPPED)) + "\"}}\n"
              "    - {{name: check, action: verify, after: flip}}")


def test_bytes_flipped_in_the_backing_file_mid_run_are_found_and_located(
        lab: tuple[labs.Lab, Path], tmp_path: Path) -> None:
    made, lab_dir = lab
    results = tmp_path / "results"
    proc = assay("run", str(scenario(tmp_path, made, FLIP_STEPS)), "--lab", "fx", "--results",
                 str(results), lab_dir=lab_dir)
    run_dir, run, steps = last_run(results)
    assert proc.returncode == 1 and run["status"] == "failed", proc.stdout
    flipped = {int(b): int(g) for b, g in
               (line.split() for line in (tmp_path / "flipped.txt").read_text().splitlines())}
    assert sorted(flipped) == FLIPPED
    final = Journal.load(run_dir / "integrity", "db", 4096).gens
    # a block the writer rewrote after the flip is whole again; every other one must be found
    still = sorted(b for b, g in flipped.items() if final[b] == g)
    assert len(still) >= len(FLIPPED) - 3  # 20 writes/s over 4096 blocks rarely hit one
    check = next(s for s in steps if s["name"] == "check")
    assert check["outcome"] == "ok"
    found_mid = check["offsets"]["db"]["corrupt"]
    assert set(b * BS for b in still) <= set(found_mid) <= set(b * BS for b in FLIPPED)
    section = run["integrity"]
    last = section["passes"][-1]
    assert last["label"] == "final" and last["status"] == "completed"
    assert last["workloads"]["db"]["offsets"]["corrupt"] == [b * BS for b in still]
    assert last["checked"] == 4096 and last["lost"] == last["stale"] == 0
    assert section["files"][0]["acknowledged"] > 50
    graded = {t["expr"]: t for t in run["thresholds"]}
    assert not graded["integrity.corrupt == 0"]["passed"]
    assert graded["integrity.corrupt == 0"]["observed"] == len(found_mid)
    assert graded["integrity.lost == 0"]["passed"]
    assert "integrity" in (run_dir / "report.html").read_text()
    # the same blocks, again, from the finished run
    again = assay("verify", run_dir.name, "--results", str(results), "--json", lab_dir=lab_dir)
    doc = json.loads(again.stdout)
    assert again.returncode == 1 and doc["status"] == "failed"
    assert doc["pass"]["workloads"]["db"]["offsets"]["corrupt"] == [b * BS for b in still]
    assert json.loads((run_dir / "verify.json").read_text())["status"] == "failed"


def test_an_undisturbed_run_reports_zeros_and_ctrl_c_leaves_an_interrupted_verify(
        lab: tuple[labs.Lab, Path], tmp_path: Path) -> None:
    made, lab_dir = lab
    results = tmp_path / "results"
    proc = assay("run", str(scenario(tmp_path, made, "    - {{action: verify, at: 2s}}")),
                 "--lab", "fx", "--results", str(results), lab_dir=lab_dir)
    run_dir, run, _ = last_run(results)
    assert proc.returncode == 0 and run["status"] == "passed", proc.stdout
    assert [(p["status"], p["checked"], p["lost"], p["stale"], p["corrupt"], p["unreadable"])
            for p in run["integrity"]["passes"]] == [("completed", 4096, 0, 0, 0, 0)] * 2
    shown = json.loads(assay("show", run_dir.name, "--results", str(results), "--json",
                             lab_dir=lab_dir).stdout)["integrity"]
    assert shown["status"] == "verified" and \
        [shown[k] for k in ("lost", "stale", "corrupt", "unreadable")] == [0, 0, 0, 0]
    # slow reads (the fault server delays each one) make the pass last; Ctrl-C it
    control = str(Path(made.fuse_mount) / "control")
    faulty.send(control, f"slow {Path(made.served[0]).name} 30 read")
    try:
        env_proc = subprocess.Popen(
            [sys.executable, "-m", "assay", "verify", run_dir.name, "--results", str(results)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            doc_path = run_dir / "verify.json"
            if doc_path.exists() and json.loads(doc_path.read_text())["status"] == "running":
                break
            time.sleep(0.05)
        time.sleep(0.5)
        env_proc.send_signal(signal.SIGINT)
        out, err = env_proc.communicate(timeout=30)
    finally:
        faulty.send(control, "heal all")
    assert env_proc.returncode == 130, out + err
    doc = json.loads((run_dir / "verify.json").read_text())
    assert doc["status"] == "interrupted" and doc["pass"]["reason"] == "interrupted by the user"
    assert 0 <= doc["pass"]["checked"] < 4096 and doc["pass"]["corrupt"] == 0
    assert "INTERRUPTED" in out
