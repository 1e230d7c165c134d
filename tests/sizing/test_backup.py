"""Backup stream sizing (seed 004's SQL Server backup to HDD; seed 000's ESRP backup test)."""

import pytest

from assay.exitcodes import UserError
from assay.sizing import backup
from assay.sizing.backup import BackupDesign

MB, TB = 10**6, 10**12


def test_the_slower_side_sets_the_pace():
    # 4 spindles take 100 MB/s; 2 databases give 2 x 215 = 430 MB/s -> the spindles bound it
    r = backup.size(BackupDesign(spindles=4, databases=2, per_database=215 * MB))
    assert r.value("spindle_throughput") == 100 and r.value("database_throughput") == 430
    assert r.value("throughput") == 100
    fast_disks = backup.size(BackupDesign(spindles=40, databases=2, per_database=215 * MB))
    assert fast_disks.value("throughput") == 430


def test_time_to_back_up_and_the_window():
    r = backup.size(BackupDesign(spindles=4, dataset=2 * TB, window_s=4 * 3600))
    assert r.value("backup_hours") == pytest.approx(2e12 / 100e6 / 3600)  # 5.6 h
    assert r.value("required_throughput") == pytest.approx(2e12 / 4 / 3600 / 1e6)  # 139 MB/s
    assert r.value("spindles_needed") == 6  # ceil(138.9 / 25)
    assert [c.rule for c in r.failed] == ["The backup fits its throughput"]
    assert not backup.size(BackupDesign(spindles=6, dataset=2 * TB, window_s=4 * 3600)).failed


def test_per_target_throughput_and_outstanding_io():
    r = backup.size(BackupDesign(throughput=120 * MB, targets=16, outstanding=2))
    assert r.value("per_target") == 7.5
    assert r.value("outstanding_ios") == 32


@pytest.mark.parametrize("kw, words", [
    ({}, "what paces the backup"),
    ({"spindles": 0}, "--spindles"),
    ({"spindles": 4, "outstanding": 3}, "1 or 2"),
    ({"spindles": 4, "window_s": 3600}, "--window needs --dataset"),
    ({"throughput": -1}, "--throughput"),
])
def test_bad_backup_input(kw, words):
    with pytest.raises(UserError, match=words):
        backup.size(BackupDesign(**kw))
