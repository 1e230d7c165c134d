"""`snapshot` on real filesystems: read-only btrfs snapshots, XFS reflink copies, keep-newest."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from assay.actions import snapshot
from assay.platforms.fsbase import ActionFailed
from tests.actions.support import context, fs_platform
from tests.realfs import Machine


def free_bytes(path: Path) -> int:
    os.sync()
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def test_requires() -> None:
    assert snapshot.requires(snapshot.Params()) == {"snapshot"}
    assert snapshot.requires(snapshot.Params(keep=3)) == {"snapshot", "snapshot.delete"}
    assert snapshot.requires(snapshot.Params(op="delete")) == {"snapshot.delete"}


def test_btrfs_snapshot_is_a_real_read_only_copy_of_that_moment(machine: Machine) -> None:
    fs = fs_platform(machine, "btrfs")
    (fs.directory / "db.dat").write_bytes(b"before")
    p = snapshot.Params(prefix="nightly")
    ctx = context(fs, p, name="snap", n=7)
    snapshot.run(p, ctx)
    (fs.directory / "db.dat").write_bytes(b"after!")
    name = ctx.details["snapshot"]
    assert name.startswith("nightly-") and name.endswith("-snap-007")
    assert fs.created_snapshots == [name] and ctx.details["snapshots"] == 1
    snap = fs.snapshot_dir() / name
    assert os.stat(snap).st_ino == 256  # a subvolume of its own
    ro = subprocess.run(["btrfs", "property", "get", "-ts", str(snap), "ro"],
                        capture_output=True, text=True, check=True).stdout
    assert ro.strip() == "ro=true"
    assert (snap / "db.dat").read_bytes() == b"before"
    with pytest.raises(OSError) as e:
        (snap / "new").write_text("x")
    assert e.value.errno == errno.EROFS


def test_keep_deletes_the_oldest_of_this_run(machine: Machine) -> None:
    fs = fs_platform(machine, "btrfs")
    p = snapshot.Params(keep=2)
    names = []
    for n in (1, 2, 3):
        ctx = context(fs, p, name="s", n=n)
        snapshot.run(p, ctx)
        names.append(ctx.details["snapshot"])
    assert ctx.details["deleted"] == [names[0]] and ctx.details["snapshots"] == 2
    assert fs.created_snapshots == names[1:]
    assert sorted(p.name for p in fs.snapshot_dir().iterdir()) == sorted(names[1:])
    listed = subprocess.run(["btrfs", "subvolume", "list", "-o", str(fs.directory)],
                            capture_output=True, text=True, check=True).stdout
    assert names[0] not in listed and names[2] in listed


def test_delete_takes_the_oldest_and_says_when_there_is_none(machine: Machine) -> None:
    fs = fs_platform(machine, "btrfs")
    delete = snapshot.Params(op="delete")
    assert snapshot.run(delete, context(fs, delete)) == "no snapshot of this run to delete"
    create = snapshot.Params()
    first, second = context(fs, create, n=1), context(fs, create, n=2)
    snapshot.run(create, first)
    snapshot.run(create, second)
    ctx = context(fs, delete)
    snapshot.run(delete, ctx)
    assert ctx.details["snapshot"] == first.details["snapshot"]
    assert fs.created_snapshots == [second.details["snapshot"]]
    assert not (fs.snapshot_dir() / first.details["snapshot"]).exists()


def test_xfs_snapshot_shares_extents_and_keeps_old_data(machine: Machine) -> None:
    fs = fs_platform(machine, "xfs")
    data = fs.directory / "db.dat"
    data.write_bytes(os.urandom(32 << 20))
    before = free_bytes(fs.directory)
    p = snapshot.Params()
    ctx = context(fs, p)
    snapshot.run(p, ctx)
    copy = fs.snapshot_dir() / ctx.details["snapshot"] / "db.dat"
    assert copy.read_bytes() == data.read_bytes()
    assert before - free_bytes(fs.directory) < 4 << 20  # not a 32 MiB copy: shared extents
    with open(data, "r+b") as fh:  # copy on write: the snapshot keeps the old block
        fh.write(b"\0" * 4096)
    assert copy.read_bytes()[:4096] != b"\0" * 4096


def test_xfs_without_reflink_refuses(machine: Machine) -> None:
    fs = fs_platform(machine, "xfs", args=("-m", "reflink=0"))
    (fs.directory / "db.dat").write_bytes(b"x" * 8192)
    p = snapshot.Params()
    with pytest.raises(ActionFailed, match="reflink"):
        snapshot.run(p, context(fs, p))
    assert fs.created_snapshots == []
