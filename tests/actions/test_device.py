"""`device` on real btrfs (add, remove, replace on loop devices); refused where unsupported."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from assay.actions import device
from assay.platforms import driver
from assay.platforms.fsbase import ActionFailed
from assay.scenario.models import Target
from tests.actions.support import context, fs_platform, local_platform
from tests.realfs import Machine


def members(mountpoint: str) -> list[str]:
    out = subprocess.run(["btrfs", "filesystem", "show", mountpoint], capture_output=True,
                         text=True, check=True).stdout
    return re.findall(r"\bpath (/dev/\S+)", out)


def op(**kw: object) -> device.Params:
    return device.Params.model_validate(kw)


def test_requires_the_operation() -> None:
    assert device.requires(op(op="replace")) == {"device.replace"}
    assert device.requires(op(op="fail")) == {"device.fail"}


def test_pick() -> None:
    devs = ["/dev/a", "/dev/b", "/dev/c"]
    assert device.pick(devs, 1, "device") == "/dev/a"
    assert device.pick(devs, "2", "device") == "/dev/b"
    assert device.pick(devs, None, "device") == "/dev/c"  # default: the last
    assert device.pick(devs, "/dev/zz", "device") == "/dev/zz"  # a node is taken as given
    with pytest.raises(ActionFailed, match=r"device 4: the platform has 3 \(/dev/a, /dev/b"):
        device.pick(devs, 4, "device")
    with pytest.raises(ActionFailed, match=r"device 0"):
        device.pick(devs, 0, "device")
    with pytest.raises(ActionFailed, match=r"spare device 1: the platform has 0 \(none\)"):
        device.pick([], 1, "spare device")
    with pytest.raises(ActionFailed, match="no spare device to choose from: name one"):
        device.pick([], None, "spare device")


def test_btrfs_add_a_spare_then_remove_the_first_device(machine: Machine) -> None:
    fs = fs_platform(machine, "btrfs", spares=1)
    (first,), (spare,) = fs.members(), fs.target.options["spares"]
    (fs.directory / "db.dat").write_bytes(b"k" * (1 << 20))
    add = op(op="add")
    ctx = context(fs, add)
    device.run(add, ctx)
    assert ctx.details == {"op": "add", "device": spare, "new_device": None}
    assert members(fs.mountpoint) == [first, spare]
    assert fs.spare_devices() == []
    remove = op(op="remove", device=1)
    ctx = context(fs, remove)
    device.run(remove, ctx)
    assert ctx.details["device"] == first
    assert members(fs.mountpoint) == [spare]
    assert (fs.directory / "db.dat").read_bytes() == b"k" * (1 << 20)  # data moved over


def test_btrfs_replace_rebuilds_onto_the_spare(machine: Machine) -> None:
    fs = fs_platform(machine, "btrfs", spares=1)
    (first,), (spare,) = fs.members(), fs.target.options["spares"]
    (fs.directory / "db.dat").write_bytes(b"r" * (2 << 20))
    p = op(op="replace", device="1")
    ctx = context(fs, p)
    device.run(p, ctx)
    assert ctx.details == {"op": "replace", "device": first, "new_device": spare}
    assert members(fs.mountpoint) == [spare]
    assert not fs.busy(ctx, "replace")
    assert (fs.directory / "db.dat").read_bytes() == b"r" * (2 << 20)


def test_btrfs_cannot_fail_a_device(machine: Machine) -> None:
    fs = fs_platform(machine, "btrfs")
    p = op(op="fail")
    with pytest.raises(ActionFailed, match="btrfs cannot fail a device"):
        device.run(p, context(fs, p))
    assert len(fs.members()) == 1


def test_replace_without_a_spare_is_refused_before_touching_anything(machine: Machine) -> None:
    fs = fs_platform(machine, "btrfs")
    before = members(fs.mountpoint)
    p = op(op="replace")
    with pytest.raises(ActionFailed, match="no spare device"):
        device.run(p, context(fs, p))
    assert members(fs.mountpoint) == before


def test_xfs_refuses_device_operations(machine: Machine) -> None:
    fs = fs_platform(machine, "xfs", spares=1)
    for name in ("remove", "add", "replace"):
        p = op(op=name)
        with pytest.raises(ActionFailed, match=f"platform xfs cannot {name} a device"):
            device.run(p, context(fs, p))


def test_needs_a_filesystem_platform(tmp_path: Path) -> None:
    p = op(op="remove")
    with pytest.raises(AssertionError):
        device.run(p, context(local_platform(tmp_path), p))


def test_add_and_replace_default_to_the_first_spare(tmp_path: Path) -> None:
    nodes = {n: tmp_path / n for n in ("d1", "s1", "s2")}
    for path in nodes.values():
        path.touch()  # spare_devices() keeps only nodes that exist
    log = tmp_path / "ops.log"
    target = Target(platform="command", path=str(tmp_path), options={
        "devices": [str(nodes["d1"])], "spares": [str(nodes["s1"]), str(nodes["s2"])],
        "device.add": f"echo add {{device}} >> {log}",
        "device.replace": f"echo replace {{device}} {{new_device}} >> {log}"})
    fs = driver("command")(target)
    fs.prepare()
    for name in ("add", "replace"):
        p = op(op=name)
        device.run(p, context(fs, p))
    assert log.read_text().splitlines() == [f"add {nodes['s1']}",
                                            f"replace {nodes['d1']} {nodes['s1']}"]


def test_fault_ops_need_their_keys() -> None:
    assert device.requires(op(op="slow", latency="20ms")) == {"device.slow"}
    assert op(op="slow", latency="20ms").latency == pytest.approx(0.02)
    assert op(op="corrupt", offset="1MiB", length="4k").offset == 1 << 20
    with pytest.raises(ValueError, match="op slow needs `latency`"):
        op(op="slow")
    with pytest.raises(ValueError, match="op corrupt needs `length`"):
        op(op="corrupt", offset=0)
    with pytest.raises(ValueError):
        op(op="fail", mode="sideways")


def test_only_a_faulty_target_offers_fault_ops(tmp_path: Path) -> None:
    plain = Target(platform="btrfs", path=str(tmp_path))
    faulty = Target(platform="btrfs", path=str(tmp_path), options={"faulty": True})
    for name in ("btrfs", "xfs"):
        assert not {"device.fail", "device.slow"} & driver(name).supports(plain)
        assert {"device.fail", "device.slow", "device.corrupt", "device.heal"} <= \
            driver(name).supports(faulty)


def test_btrfs_without_a_faulty_lab_cannot_slow_a_device(machine: Machine) -> None:
    fs = fs_platform(machine, "btrfs")
    p = op(op="slow", latency="5ms")
    with pytest.raises(ActionFailed, match="btrfs cannot slow a device"):
        device.run(p, context(fs, p))


def test_a_faulty_scenario_refuses_a_target_that_is_not_a_faulty_lab(machine: Machine) -> None:
    from assay.exitcodes import UserError

    _, mnt = machine.filesystem("btrfs")
    fs = driver("btrfs")(Target(platform="btrfs", path=str(mnt / "data"),
                                options={"faulty": True}))
    with pytest.raises(UserError, match="needs a faulty lab"):
        fs.prepare()
