"""`rebuild`: a full btrfs balance that spreads data onto an added device; xfs refuses."""

from __future__ import annotations

import re
import subprocess

import pytest

from assay.actions import device, rebuild
from assay.platforms.fsbase import ActionFailed
from tests.actions.support import context, fs_platform
from tests.realfs import Machine


def used_on(mountpoint: str, dev: str) -> str:
    out = subprocess.run(["btrfs", "filesystem", "show", "--raw", mountpoint],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(rf"used (\d+) path {re.escape(dev)}\b", out)
    assert m, out
    return m.group(1)


def test_requires_rebuild() -> None:
    assert rebuild.requires(rebuild.Params()) == {"rebuild"}


def test_btrfs_rebuild_moves_chunks_onto_the_new_device(machine: Machine) -> None:
    fs = fs_platform(machine, "btrfs", spares=1)
    (spare,) = fs.target.options["spares"]
    (fs.directory / "db.dat").write_bytes(b"b" * (8 << 20))
    add = device.Params(op="add")
    device.run(add, context(fs, add))
    assert used_on(fs.mountpoint, spare) == "0"  # an added device holds nothing yet
    p = rebuild.Params()
    ctx = context(fs, p)
    out = rebuild.run(p, ctx)
    assert re.search(r"Done, had to relocate \d+ out of \d+ chunks", out)
    assert int(used_on(fs.mountpoint, spare)) > 0
    assert fs.busy(ctx, "rebuild") is False and fs.busy(ctx, "balance") is False


def test_xfs_refuses(machine: Machine) -> None:
    fs = fs_platform(machine, "xfs")
    p = rebuild.Params()
    with pytest.raises(ActionFailed, match="platform xfs cannot rebuild"):
        rebuild.run(p, context(fs, p))
