"""The XFS driver on a real XFS: a directory, snapshots as reflink copies (shared extents)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.platforms import xfs
from assay.platforms.fsbase import SNAPSHOT_DIR, ActionFailed, run_command
from assay.scenario.models import Target
from tests.realfs import Machine


def driver_on(mnt: Path, **options: object) -> xfs.Driver:
    return xfs.Driver(Target(platform="xfs", path=str(mnt / "pool" / "data"), options=options))


def free(path: Path) -> int:
    os.sync()
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def test_capabilities() -> None:
    assert xfs.Driver.supports(Target(platform="xfs")) == {"snapshot", "snapshot.delete"}


def test_prepare_on_xfs_and_refuses_other_filesystems(machine: Machine) -> None:
    _, mnt = machine.filesystem("xfs")
    d = driver_on(mnt)
    assert d.prepare() == mnt / "pool" / "data" and (mnt / "pool" / "data").is_dir()
    assert d.mountpoint == str(mnt) and d.facts()["mount"]["fstype"] == "xfs"
    _, other = machine.filesystem("btrfs")
    with pytest.raises(UserError, match=r"is on btrfs, not xfs \(platform xfs\)"):
        driver_on(other).prepare()
    assert not (other / "pool").exists()


def test_snapshot_is_a_reflink_copy(machine: Machine) -> None:
    _, mnt = machine.filesystem("xfs")
    d = driver_on(mnt)
    data = d.prepare()
    (data / "sub").mkdir()
    (data / "sub" / "log.dat").write_bytes(os.urandom(1 << 20))
    (data / "db.dat").write_bytes(os.urandom(48 << 20))
    before = free(mnt)
    out = d.snapshot_create(run_command, "s1")
    assert "reflinked 2 entries" in out
    snap = d.snapshot_dir() / "s1"
    assert (snap / "db.dat").read_bytes() == (data / "db.dat").read_bytes()
    assert (snap / "sub" / "log.dat").read_bytes() == (data / "sub" / "log.dat").read_bytes()
    assert before - free(mnt) < 4 << 20  # 49 MiB of data, shared rather than copied
    d.snapshot_create(run_command, "s2")
    assert sorted(p.name for p in (d.snapshot_dir() / "s2").iterdir()) == ["db.dat", "sub"]
    assert d.created_snapshots == ["s1", "s2"]  # s2 does not hold a copy of s1
    assert d.snapshot_delete(run_command, "s1") == "removed s1"
    assert not snap.exists() and d.created_snapshots == ["s2"]


def test_snapshot_of_an_empty_directory(machine: Machine) -> None:
    _, mnt = machine.filesystem("xfs")
    d = driver_on(mnt)
    d.prepare()
    assert "reflinked 0 entries" in d.snapshot_create(run_command, "empty")
    assert list((d.snapshot_dir() / "empty").iterdir()) == []


def test_refuses_without_reflink(machine: Machine) -> None:
    _, mnt = machine.filesystem("xfs", args=("-m", "reflink=0"))
    d = driver_on(mnt)
    (d.prepare() / "db.dat").write_bytes(b"x" * 65536)
    with pytest.raises(ActionFailed, match="exited with status 1"):
        d.snapshot_create(run_command, "s1")
    assert d.created_snapshots == []


def test_a_failed_snapshot_leaves_nothing_behind(machine: Machine) -> None:
    _, mnt = machine.filesystem("xfs", args=("-m", "reflink=0"))
    d = driver_on(mnt)
    data = d.prepare()
    (data / "db.dat").write_bytes(b"x" * 65536)
    with pytest.raises(ActionFailed):
        d.snapshot_create(run_command, "s1")
    d.cleanup(keep=False)
    assert not (data / SNAPSHOT_DIR).exists()
    assert sorted(p.name for p in data.iterdir()) == ["db.dat"]
