"""The verify pass on real files: an undisturbed file is all ok; flipped bytes, an older copy of
a block, a block that never landed and unreadable blocks are each counted and located."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from assay.agent import blockpass
from assay.integrity import verify
from assay.integrity.session import Session
from tests.integrity.support import BLOCK, flip, written

PROBLEMS = ("lost", "stale", "corrupt", "unreadable")


def final(s: Session) -> dict[str, object]:
    return s.verify("final")


def test_an_undisturbed_file_reports_zeros(tmp_path: Path) -> None:
    s = written(tmp_path, seconds=0.5)
    assert s.writers["db"].acknowledged > 50  # the writer really wrote
    r = final(s)
    assert r["status"] == "completed" and r["checked"] == r["ok"] == 256
    assert [r[p] for p in PROBLEMS] == [0, 0, 0, 0]
    assert r["bytes"] == 256 * BLOCK and r["mbps"] > 0


def test_every_flipped_block_is_found_and_located(tmp_path: Path) -> None:
    s = written(tmp_path, seconds=0.3)
    path = s.areas[0].path
    hit = [0, 1, 17, 100, 254, 255]
    for i, b in enumerate(hit):
        flip(path, b * BLOCK + (i * 1361) % BLOCK)  # header, payload and checksum bytes alike
    r = final(s)
    assert r["corrupt"] == len(hit) and r["ok"] == 256 - len(hit)
    assert r["workloads"]["db"]["offsets"]["corrupt"] == [b * BLOCK for b in hit]
    assert r["lost"] == r["stale"] == r["unreadable"] == 0


def test_an_acknowledged_write_the_disk_holds_at_an_older_generation_is_stale(
        tmp_path: Path) -> None:
    s = written(tmp_path)
    path = s.areas[0].path
    old = path.read_bytes()[5 * BLOCK:6 * BLOCK]  # block 5 at the first generation
    s.start()  # the writer rewrites blocks until block 5 has a newer acknowledged generation
    while s.writers["db"].journal.gens[5] <= 1:
        threading.Event().wait(0.01)
    s.stop()
    assert final(s)["stale"] == 0
    with open(path, "r+b") as f:  # the disk "forgets" that write: it holds the older copy
        f.seek(5 * BLOCK)
        f.write(old)
        os.fsync(f.fileno())
    r = final(s)
    assert r["stale"] == 1 and r["workloads"]["db"]["offsets"]["stale"] == [5 * BLOCK]
    assert r["corrupt"] == r["lost"] == 0


def test_an_acknowledged_block_that_never_landed_is_lost(tmp_path: Path) -> None:
    s = written(tmp_path)
    with open(s.areas[0].path, "r+b") as f:
        f.seek(9 * BLOCK)
        f.write(bytes(2 * BLOCK))  # what a never-written (or trimmed) range reads back as
    r = final(s)
    assert r["lost"] == 2 and r["workloads"]["db"]["offsets"]["lost"] == [9 * BLOCK, 10 * BLOCK]


def test_offsets_are_kept_for_the_first_hundred_only(tmp_path: Path) -> None:
    s = written(tmp_path, blocks=300)
    with open(s.areas[0].path, "r+b") as f:
        f.write(bytes(250 * BLOCK))
    r = final(s)
    assert r["lost"] == 250 and len(r["workloads"]["db"]["offsets"]["lost"]) == 100


def test_a_stopped_pass_is_interrupted_and_keeps_its_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blockpass, "CHUNK", 4 * BLOCK)  # the agent reads blocks
    s = written(tmp_path)
    flip(s.areas[0].path, 10)
    stop = threading.Event()
    seen: list[int] = []

    def progress(n: int) -> None:
        seen.append(n)
        if len(seen) == 3:
            stop.set()

    r = verify.run_pass(s.areas, {"db": s.writers["db"].journal.gens}, True, "t", stop=stop,
                        progress=progress)
    assert r["status"] == "interrupted"
    assert r["corrupt"] == 1 and 0 < r["checked"] < 256 and r["checked"] == 12
