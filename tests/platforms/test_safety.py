"""Never destroy data: a local target's manifest as a finished run reads it, block devices
holding a filesystem, partition table or mount refused (real loop devices). Foreign files are
refused on every host alike: tests/test_prefill_files.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.platforms import safety
from tests.realfs import Machine


def test_a_missing_or_damaged_manifest_reads_as_empty(tmp_path: Path) -> None:
    assert safety.read_manifest(tmp_path) == {}
    (tmp_path / safety.MANIFEST).write_text('{"a": ')
    assert safety.read_manifest(tmp_path) == {}
    (tmp_path / safety.MANIFEST).write_text('["a.dat"]')
    assert safety.read_manifest(tmp_path) == {}


def test_a_missing_device() -> None:
    with pytest.raises(UserError, match="target device /dev/no-such-disk does not exist"):
        safety.check_block_device("/dev/no-such-disk", force=True)


def test_a_blank_device_is_accepted(machine: Machine) -> None:
    safety.check_block_device(machine.loop(), force=False)


def test_refuses_a_device_with_a_filesystem(machine: Machine, tmp_path: Path) -> None:
    dev = machine.loop("320M")
    machine.mkfs("xfs", dev)
    with pytest.raises(UserError, match=f"refusing to write to {dev}: it type xfs\\. "
                                        f"Its data would be destroyed"):
        safety.check_block_device(dev, force=False)
    link = tmp_path / "disk-by-id"
    link.symlink_to(dev)  # another name for the same device
    with pytest.raises(UserError, match="type xfs"):
        safety.check_block_device(str(link), force=False)
    safety.check_block_device(dev, force=True)


def test_refuses_a_mounted_device(machine: Machine) -> None:
    dev, _ = machine.filesystem("btrfs")
    with pytest.raises(UserError, match=r"type btrfs; is mounted"):
        safety.check_block_device(dev, force=False)


def test_refuses_a_partition_table(machine: Machine) -> None:
    dev = machine.loop("16M")
    mbr = bytearray(512)
    mbr[446:462] = bytes([0, 0, 2, 0, 0x83, 0, 0, 0]) + (2048).to_bytes(4, "little") + \
        (4096).to_bytes(4, "little")  # one Linux partition
    mbr[510:512] = b"\x55\xaa"
    with open(dev, "r+b") as fh:
        fh.write(mbr)
    subprocess.run(["blockdev", "--flushbufs", dev], check=False)
    with pytest.raises(UserError, match="pttype dos"):
        safety.check_block_device(dev, force=False)


def test_device_state_dir_follows_the_device_not_its_name(
        machine: Machine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_STATE_DIR", str(tmp_path / "state"))
    dev = machine.loop("16M")
    first = safety.device_state_dir(dev)
    assert first.is_dir() and first.parent == tmp_path / "state" / "devices"
    assert first.name.startswith(Path(dev).name + "-")
    assert safety.device_state_dir(dev) == first  # the same device: the same manifest
    other = tmp_path / "other.img"
    other.write_bytes(b"")
    os.truncate(other, 16 << 20)
    subprocess.run(["losetup", "-d", dev], check=True)
    machine.loops.remove(dev)  # no longer ours: never detach what another process attached
    if subprocess.run(["losetup", dev, str(other)], capture_output=True).returncode:
        pytest.skip(f"another process took {dev} meanwhile")
    machine.loops.append(dev)  # the same node, another disk
    assert safety.device_state_dir(dev) != first
