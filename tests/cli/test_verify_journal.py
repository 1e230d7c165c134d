"""`assay verify` when its journal or its integrity file is damaged (issue 21, item 4), on a
real run (real fio beside the integrity writer): a stale block is found with the journal's
log, and without the log (or with a damaged one) verify says it cannot judge staleness
instead of passing; a truncated integrity file is lost blocks, counted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from assay.integrity.block import fill
from assay.integrity.journal import RECORD
from tests.conftest import needs_fio

pytestmark = needs_fio

BS = 8192
SCENARIO = """\
name: journal
integrity: {{size: 2MiB, block: 8k, rate: 200}}
target: {{path: {target}}}
workloads:
  db: {{kind: oltp, data_iops: 100, log_iops: 10, dataset: 32MiB, load: {{pacing: even}}}}
timeline: {{duration: 3s}}
"""


def assay(*args: str, results: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args, "--results", str(results)],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("journal")
    (root / "target").mkdir()
    (root / "s.yaml").write_text(SCENARIO.format(target=root / "target"))
    r = assay("run", str(root / "s.yaml"), results=root / "results")
    assert r.returncode == 0, r.stdout + r.stderr
    return root


@pytest.fixture
def run(made, tmp_path) -> tuple[Path, Path, dict]:
    """A copy of the run and its target: (run directory, integrity file, its file entry)."""
    shutil.copytree(made / "target", tmp_path / "target")
    shutil.copytree(made / "results", tmp_path / "results")
    run_dir = next(p for p in (tmp_path / "results").iterdir() if (p / "run.json").is_file())
    record = json.loads((run_dir / "run.json").read_text())
    record["target"]["path"] = str(tmp_path / "target")
    (run_dir / "run.json").write_text(json.dumps(record))
    entry = record["integrity"]["files"][0]
    return run_dir, tmp_path / "target" / entry["path"], entry


def make_stale(run_dir: Path, data: Path, entry: dict) -> int:
    """Rewrite one block the log updated with the generation the checkpoint holds (a valid,
    older block: what a platform that lost the last write would return); its offset."""
    gens = array("I", (run_dir / "integrity" / "db.gen").read_bytes())
    log = (run_dir / "integrity" / "db.log").read_bytes()
    last = {b: g for b, g in RECORD.iter_unpack(log)}
    block = next(b for b, g in last.items() if g > gens[b] >= 1)
    buf = memoryview(bytearray(BS))
    fill(buf, 0, BS, block * BS, gens[block], int(entry["writer"]))
    fd = os.open(data, os.O_WRONLY)
    try:
        os.pwrite(fd, buf, block * BS)
    finally:
        os.close(fd)
    return block * BS


def verify(run_dir: Path) -> tuple[subprocess.CompletedProcess[str], dict | None]:
    r = assay("verify", run_dir.name, "--json", results=run_dir.parent)
    return r, json.loads(r.stdout) if r.stdout.strip() else None


def test_a_stale_block_is_found_with_the_journal_log(run):
    run_dir, data, entry = run
    assert (run_dir / "integrity" / "db.log").stat().st_size >= RECORD.size
    offset = make_stale(run_dir, data, entry)
    r, doc = verify(run_dir)
    assert r.returncode == 1 and doc["pass"]["stale"] == 1, r.stderr
    assert doc["pass"]["workloads"]["db"]["offsets"]["stale"] == [offset]


def test_without_its_log_verify_cannot_judge_staleness_and_says_so(run):
    run_dir, data, entry = run
    make_stale(run_dir, data, entry)
    (run_dir / "integrity" / "db.log").unlink()
    r, _ = verify(run_dir)
    assert r.returncode == 2, r.stdout
    assert "journal of workload 'db' is missing or damaged" in r.stderr
    assert "cannot tell a stale block" in r.stderr and "db.log is missing" in r.stderr


@pytest.mark.parametrize("damage", ["half", "garbage", "checkpoint"])
def test_a_damaged_journal_is_refused_not_trusted(run, damage):
    run_dir, data, entry = run
    make_stale(run_dir, data, entry)
    part = run_dir / "integrity" / ("db.gen" if damage == "checkpoint" else "db.log")
    content = part.read_bytes()
    if damage == "half":  # whole records: nothing looks torn
        part.write_bytes(content[: len(content) // 2 // RECORD.size * RECORD.size])
    else:
        part.write_bytes(content[:8] + bytes(b ^ 0xFF for b in content[8:16]) + content[16:])
    r, _ = verify(run_dir)
    assert r.returncode == 2, r.stdout
    assert "missing or damaged" in r.stderr and "Traceback" not in r.stderr


def test_a_truncated_integrity_file_is_lost_blocks_counted(run):
    run_dir, data, entry = run
    blocks = int(entry["blocks"])
    with open(data, "r+b") as f:
        f.truncate(blocks // 2 * BS)
    r, doc = verify(run_dir)
    assert r.returncode == 1, r.stdout + r.stderr
    assert doc["pass"]["checked"] == blocks and doc["pass"]["lost"] == blocks - blocks // 2
