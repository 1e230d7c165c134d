"""The btrfs driver on a real btrfs: the target as a subvolume, per-subvolume compression
(set, effective and reported), members, snapshots and their cleanup."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.platforms import btrfs
from assay.platforms.fsbase import run_command
from assay.scenario.models import Target
from tests.realfs import Machine


def driver_on(mnt: Path, **options: object) -> btrfs.Driver:
    return btrfs.Driver(Target(platform="btrfs", path=str(mnt / "data"), options=options))


def prop(path: Path) -> str:
    return subprocess.run(["btrfs", "property", "get", str(path), "compression"],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_capabilities() -> None:
    caps = btrfs.Driver.supports(Target(platform="btrfs"))
    assert {"snapshot", "snapshot.delete", "device.replace", "scrub", "rebuild"} <= caps
    assert "device.fail" not in caps  # a kernel cannot fail a btrfs member on demand


def test_prepare_makes_the_target_a_subvolume_once(machine: Machine) -> None:
    _, mnt = machine.filesystem("btrfs")
    d = driver_on(mnt)
    assert d.prepare() == mnt / "data" and d.directory == mnt / "data"
    assert btrfs.is_subvolume(mnt / "data") and os.stat(mnt / "data").st_ino == 256
    (mnt / "data" / "f").write_text("x")
    driver_on(mnt).prepare()  # again: the existing subvolume is used as it is
    assert (mnt / "data" / "f").read_text() == "x"
    listed = run_command(["btrfs", "subvolume", "list", str(mnt)])
    assert listed.count("path data") == 1


def test_refuses_a_plain_directory_and_other_filesystems(machine: Machine) -> None:
    _, mnt = machine.filesystem("btrfs")
    (mnt / "data").mkdir()
    with pytest.raises(UserError, match="plain directory, not a btrfs subvolume"):
        driver_on(mnt).prepare()
    _, xfs = machine.filesystem("xfs")
    with pytest.raises(UserError, match=r"is on xfs, not btrfs \(platform btrfs\)"):
        driver_on(xfs).prepare()
    assert not (xfs / "data").exists()


def test_compression_per_subvolume_is_set_and_reported(machine: Machine) -> None:
    _, mnt = machine.filesystem("btrfs")
    d = driver_on(mnt, compression="zstd", subvolumes={"logs": {"compression": "lzo"},
                                                       "raw": {"compression": "none"},
                                                       "plain": None})
    d.prepare()
    assert prop(mnt / "data") == "compression=zstd"
    assert prop(mnt / "data" / "logs") == "compression=lzo"
    assert btrfs.is_subvolume(mnt / "data" / "plain")
    facts = d.facts()
    assert facts["platform"] == "btrfs" and facts["mount"]["fstype"] == "btrfs"
    # a subvolume made inside a compressed one inherits its compression: facts say so
    assert facts["compression"] == {"data": "zstd", "logs": "lzo", "raw": "none",
                                    "plain": "zstd"}
    assert any(line.startswith("Data, single") for line in facts["profiles"])
    assert facts["devices"] == d.members()


def test_compression_takes_effect(machine: Machine) -> None:
    if shutil.which("compsize") is None:
        pytest.skip("compsize is not installed")
    _, mnt = machine.filesystem("btrfs")
    d = driver_on(mnt, compression="zstd")
    d.prepare()
    (mnt / "data" / "f").write_bytes(b"assay " * (2 << 20))
    os.sync()
    out = run_command(["compsize", str(mnt / "data" / "f")])
    assert "zstd" in out


def test_refuses_unknown_compression_and_bad_subvolumes(machine: Machine) -> None:
    _, mnt = machine.filesystem("btrfs")
    with pytest.raises(UserError, match="btrfs compression 'gzip': use one of none, zlib"):
        driver_on(mnt, compression="gzip").prepare()
    with pytest.raises(UserError, match="subvolumes: a mapping"):
        driver_on(mnt, subvolumes=["logs"]).prepare()


def test_members_of_a_two_device_filesystem(machine: Machine) -> None:
    a, b = machine.loop(), machine.loop()
    machine.mkfs("btrfs", a, b, args=("-d", "raid1", "-m", "raid1"))
    mnt = machine.mount(a)
    d = driver_on(mnt)
    d.prepare()
    assert d.members() == [a, b] and d.devices() == [a, b]
    assert any(line.startswith("Data, RAID1") for line in d.facts()["profiles"])
    assert d.busy(run_command, "scrub") is False and d.busy(run_command, "rebuild") is False


def test_snapshots_and_cleanup(machine: Machine) -> None:
    _, mnt = machine.filesystem("btrfs")
    d = driver_on(mnt)
    d.prepare()
    (mnt / "data" / "f").write_text("v1")
    d.snapshot_create(run_command, "s1")
    d.snapshot_create(run_command, "s2")
    assert d.created_snapshots == ["s1", "s2"]
    assert (d.snapshot_dir() / "s1" / "f").read_text() == "v1"
    d.snapshot_delete(run_command, "s1")
    assert d.created_snapshots == ["s2"] and not (d.snapshot_dir() / "s1").exists()
    d.cleanup(keep=False)
    assert not d.snapshot_dir().exists()
    assert "assay" not in run_command(["btrfs", "subvolume", "list", str(mnt)])
    assert "snapshot" not in run_command(["btrfs", "subvolume", "list", str(mnt)])
