"""What filesystem drivers share: commands, target checks, devices, spares, snapshot cleanup."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from assay.exitcodes import UserError
from assay.platforms import driver
from assay.platforms.fsbase import (
    ActionFailed,
    FsPlatform,
    StepTimeout,
    existing_parent,
    run_command,
)
from assay.scenario.models import Target
from tests.actions.support import fs_platform
from tests.realfs import Machine


def test_run_command_output_and_failures(tmp_path: Path) -> None:
    assert run_command("echo a; echo b >&2") == "a\nb"
    assert run_command(["printf", "%s", "no $shell"]) == "no $shell"
    with pytest.raises(ActionFailed, match=r"`sh -c exit 3` exited with status 3"):
        run_command(["sh", "-c", "exit 3"])
    long = run_command("seq 1 2000 | tr '\\n' ' '")
    with pytest.raises(ActionFailed) as e:
        run_command("seq 1 2000 | tr '\\n' ' ' >&2; exit 1")
    assert str(e.value).endswith(long[-500:]) and "1 2 3 4 " not in str(e.value)
    with pytest.raises(ActionFailed, match="No such file or directory"):
        run_command([str(tmp_path / "no-such-tool")])


def test_run_command_timeout() -> None:
    t0 = time.monotonic()
    with pytest.raises(StepTimeout, match=r"`sleep 10` did not finish within"):
        run_command(["sleep", "10"], timeout=0.3)
    assert time.monotonic() - t0 < 3


def test_existing_parent(tmp_path: Path) -> None:
    assert existing_parent(tmp_path / "a" / "b" / "c") == tmp_path
    assert existing_parent(tmp_path) == tmp_path


def test_check_target_refusals(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="takes a directory `path`, not a device"):
        driver("xfs")(Target(platform="xfs", device="/dev/null")).check_target()
    with pytest.raises(UserError, match=r"needs target.path on a xfs filesystem .*--lab"):
        driver("xfs")(Target(platform="xfs")).check_target()
    fstype = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", str(tmp_path)],
                            capture_output=True, text=True, check=True).stdout.strip()
    if fstype == "btrfs":
        pytest.skip("the temporary directory is on btrfs")
    with pytest.raises(UserError, match=f"is on {fstype}, not btrfs"):
        driver("btrfs")(Target(platform="btrfs", path=str(tmp_path / "x" / "y"))).prepare()
    assert not (tmp_path / "x").exists()


def test_devices_from_options_or_the_mount(machine: Machine) -> None:
    fs = fs_platform(machine, "xfs")
    (dev,) = fs.devices()
    assert dev.startswith("/dev/loop") and fs.mount["source"] == dev
    assert fs.variables() == {"path": str(fs.directory), "mountpoint": str(fs.directory.parent),
                              "device": dev}
    fs.target.options["devices"] = ["/dev/x", "/dev/y"]
    assert fs.devices() == ["/dev/x", "/dev/y"] and fs.variables()["device"] == "/dev/x"


def test_btrfs_subvolume_source_is_the_device(machine: Machine) -> None:
    dev, mnt = machine.filesystem("btrfs")
    subprocess.run(["btrfs", "subvolume", "create", str(mnt / "vol")], check=True,
                   capture_output=True)
    sub = machine.mount(dev, options="subvol=vol")
    fs = FsPlatform(Target(path=str(sub)))
    fs.check_target()
    assert fs.mount["source"].startswith(f"{dev}[")  # findmnt shows /dev/loopN[/vol]
    assert fs.devices() == [dev]


def test_spares_are_existing_devices_that_hold_no_data(tmp_path: Path) -> None:
    nodes = [tmp_path / n for n in ("d1", "s1", "s2")]
    for n in nodes:
        n.touch()
    fs = FsPlatform(Target(options={"devices": [str(nodes[0]), str(nodes[2])],
                                    "spares": [str(nodes[1]), str(tmp_path / "gone")]}))
    # members() defaults to devices(): every listed device holds data
    assert fs.spare_devices() == [str(nodes[1])]
    fs = FsPlatform(Target(options={"spares": "not a list"}))
    assert fs.spare_devices() == []


def test_undeclared_operations_are_refused(tmp_path: Path) -> None:
    fs = FsPlatform(Target(path=str(tmp_path)))
    calls: list[object] = []
    hooks = [(lambda: fs.snapshot_create(calls.append, "s"), "cannot take snapshots"),
             (lambda: fs.snapshot_delete(calls.append, "s"), "cannot delete snapshots"),
             (lambda: fs.device_op(calls.append, "fail", "/dev/x", None),
              "cannot fail a device"),
             (lambda: fs.operation(calls.append, "scrub"), "cannot scrub"),
             (lambda: fs.busy(calls.append, "rebuild"), "cannot tell whether a rebuild is running")]
    for hook, message in hooks:
        with pytest.raises(ActionFailed, match=f"platform local {message}"):
            hook()
    assert calls == []  # nothing was run


def test_cleanup_deletes_the_runs_snapshots_newest_first(machine: Machine) -> None:
    fs = fs_platform(machine, "btrfs")
    (fs.directory / "f").write_text("x")
    for name in ("a", "b", "c"):
        fs.snapshot_create(run_command, name)
    deleted: list[str] = []
    real = fs.snapshot_delete

    def spy(run, name):  # type: ignore[no-untyped-def]
        deleted.append(name)
        return real(run, name)

    fs.snapshot_delete = spy  # type: ignore[method-assign]
    fs.cleanup(keep=False)
    assert deleted == ["c", "b", "a"] and fs.created_snapshots == []
    assert not fs.snapshot_dir().exists()
    assert (fs.directory / "f").read_text() == "x"


def test_cleanup_keeps_snapshots_when_asked(machine: Machine) -> None:
    fs = fs_platform(machine, "xfs", keep_snapshots=True)
    (fs.directory / "f").write_text("x")
    fs.snapshot_create(run_command, "kept")
    fs.cleanup(keep=False)
    assert (fs.snapshot_dir() / "kept" / "f").read_text() == "x"
