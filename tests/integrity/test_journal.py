"""The journal: acknowledged generations survive a reload, and it stays bounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.agent import journal  # the integrity core runs in the agent
from assay.integrity.journal import Journal


def test_acknowledged_writes_survive_a_reload_through_checkpoint_and_log(tmp_path: Path) -> None:
    j = Journal.create(tmp_path, "db", 16)
    j.ack(3, 7)
    j.ack(5, 8)
    j.flush()
    j.ack(3, 9)
    j.forget(5)
    j.flush()
    with open(j.log_path, "ab") as f:
        f.write(b"\x01\x00")  # a torn last record, as a crash leaves it
    back = Journal.load(tmp_path, "db", 16)
    assert back.gens[3] == 9 and back.gens[5] == journal.UNKNOWN and back.gens[0] == 0


def test_the_log_folds_into_a_checkpoint_so_a_long_run_stays_bounded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "LOG_LIMIT", 800)
    j = Journal.create(tmp_path, "db", 64)
    for gen in range(2, 5002):
        j.ack(gen % 64, gen)
        if gen % 50 == 0:
            j.flush()
    j.flush()
    assert j.log_path.stat().st_size <= 800
    assert j.gen_path.stat().st_size == 64 * 4
    back = Journal.load(tmp_path, "db", 64)
    assert list(back.gens) == list(j.gens)
    assert back.gens[5001 % 64] == 5001
