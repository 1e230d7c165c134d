"""Faulty lab devices: the fault server's commands, and real loop devices over FUSE that fail,
slow down and flip bytes; btrfs raid1 degrading and rebuilding on them; `disk-failure` end to
end; nothing left behind."""

from __future__ import annotations

import errno
import mmap
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.actions import device
from assay.platforms import driver, faulty
from assay.platforms import lab as labs
from assay.platforms.faultyfs import BadCommand, Faults
from assay.scenario.models import Target
from tests.actions.support import context
from tests.platforms.test_lab import assay, last_run


def skip_without_fuse() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mounts)")
    if not Path("/dev/fuse").exists():
        pytest.skip("needs FUSE (/dev/fuse)")
    for tool in ("mkfs.btrfs", "fio"):
        if subprocess.run(["which", tool], capture_output=True).returncode:
            pytest.skip(f"{tool} is not installed")

BLOCK = 4096


# -- the commands, without FUSE --------------------------------------------------------------
def test_commands_set_and_heal_faults(tmp_path: Path) -> None:
    (tmp_path / "dev1.img").write_bytes(bytes(range(256)) * 16)
    f = Faults(tmp_path)
    f.command("fail dev1.img read")
    with pytest.raises(OSError) as e:
        f.before("dev1.img", "read")
    assert e.value.errno == errno.EIO
    f.before("dev1.img", "write")  # reads only
    f.command("slow dev1.img 30 write")
    started = time.monotonic()
    f.before("dev1.img", "write")
    assert time.monotonic() - started >= 0.03
    f.command("corrupt dev1.img 10 3 read")
    assert f.after_read("dev1.img", 8, bytes(8)) == bytes([0, 0, 255, 255, 255, 0, 0, 0])
    assert f.after_read("dev1.img", 12, bytes(4)) == bytes([255, 0, 0, 0])  # the range's tail
    assert f.status()["dev1.img"]["corrupt"] == [(10, 3)]
    f.command("heal dev1.img")
    f.before("dev1.img", "read")
    assert f.status() == {} and f.after_read("dev1.img", 8, bytes(4)) == bytes(4)
    f.command("corrupt dev1.img 1 2 backing")  # once, in the file itself
    assert (tmp_path / "dev1.img").read_bytes()[:4] == bytes([0, 254, 253, 3])
    for bad in ("fail dev1.img sideways", "fail nope.img read", "slow dev1.img", "heal",
                "corrupt dev1.img 0 0 read", "explode dev1.img"):
        with pytest.raises(BadCommand):
            f.command(bad)


def test_control_lines() -> None:
    assert faulty.command("fail", "d.img", {"mode": "write"}) == "fail d.img write"
    assert faulty.command("slow", "d.img", {"latency": 0.02}) == "slow d.img 20 both"
    assert faulty.command("corrupt", "d.img", {"offset": 4096, "length": 8,
                                               "where": "backing"}) == \
        "corrupt d.img 4096 8 backing"
    assert faulty.command("heal", "d.img", {}) == "heal d.img"


# -- real loop devices over the fault server -------------------------------------------------
@pytest.fixture
def lab(tmp_path: Path) -> Iterator[labs.Lab]:
    skip_without_fuse()
    made = labs.create("f", "btrfs-raid1", 2, 320 << 20, root=tmp_path / "labs", faulty=True)
    yield made
    labs.destroy(made)
    left_behind(made)


def left_behind(made: labs.Lab) -> None:
    """Assert that nothing of the lab is left: mounts, loop devices, the server."""
    loops = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    assert made.root not in loops
    assert made.root not in Path("/proc/mounts").read_text()
    assert subprocess.run(["pgrep", "-f", f"faultyfs {made.root}/"]).returncode == 1
    assert not Path(made.root).exists()


def read_direct(dev: str, offset: int, length: int = BLOCK) -> bytes:
    """Read with O_DIRECT, so no page cache answers for the device."""
    buf = mmap.mmap(-1, length)  # page-aligned, as O_DIRECT wants
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    try:
        n = os.preadv(fd, [buf], offset)
        return bytes(buf[:n])
    finally:
        os.close(fd)
        buf.close()


def write_direct(dev: str, offset: int, data: bytes) -> None:
    buf = mmap.mmap(-1, len(data))
    buf[:] = data
    fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
    try:
        os.pwritev(fd, [buf], offset)
    finally:
        os.close(fd)
        buf.close()


def fault(made: labs.Lab, op: str, dev: str, **spec: object) -> str:
    return faulty.apply(made.target()["options"], op, dev, spec)


@pytest.mark.parametrize("mode", ["read", "both"])
def test_fail_then_heal_on_the_loop_device(lab: labs.Lab, mode: str) -> None:
    (spare,) = lab.spares  # holds no filesystem: raw IO on the loop device
    pattern = os.urandom(BLOCK)
    write_direct(spare, 8 * BLOCK, pattern)
    assert "fails" in fault(lab, "fail", spare, mode=mode)
    with pytest.raises(OSError) as e:
        read_direct(spare, 8 * BLOCK)
    assert e.value.errno == errno.EIO
    if mode == "read":
        write_direct(spare, 16 * BLOCK, pattern)  # writes still work
    else:
        with pytest.raises(OSError):
            write_direct(spare, 16 * BLOCK, pattern)
    fault(lab, "heal", spare)
    assert read_direct(spare, 8 * BLOCK) == pattern


def test_slow_adds_the_latency(lab: labs.Lab) -> None:
    (spare,) = lab.spares

    def mean_read() -> float:
        started = time.monotonic()
        for i in range(10):
            read_direct(spare, i * BLOCK)
        return (time.monotonic() - started) / 10

    plain = mean_read()
    fault(lab, "slow", spare, latency=0.025, mode="read")
    slowed = mean_read()
    assert slowed >= 0.025 and slowed - plain >= 0.024, (plain, slowed)
    fault(lab, "heal", spare)
    assert mean_read() < 0.02


@pytest.mark.parametrize("where", ["read", "backing"])
def test_corrupt_flips_exactly_the_chosen_bytes(lab: labs.Lab, where: str) -> None:
    (spare,) = lab.spares
    offset = 5 * BLOCK
    pattern = os.urandom(2 * BLOCK)
    write_direct(spare, offset, pattern)
    fault(lab, "corrupt", spare, offset=offset + 100, length=7, where=where)
    got = read_direct(spare, offset, 2 * BLOCK)
    flipped = [i for i in range(len(got)) if got[i] != pattern[i]]
    assert flipped == list(range(100, 107))
    assert all(got[i] == pattern[i] ^ 0xFF for i in flipped)
    fault(lab, "heal", spare)
    healed = read_direct(spare, offset, 2 * BLOCK)
    # healing ends a read fault; a flip in the backing file stays (rot at rest)
    assert (healed == pattern) == (where == "read")


def test_btrfs_raid1_degrades_and_replace_rebuilds(lab: labs.Lab) -> None:
    assert driver("btrfs").supports(Target(**lab.target())) >= faulty.CAPABILITIES
    fs = driver("btrfs")(Target(**lab.target()))
    fs.prepare()
    first, second = lab.devices
    data = os.urandom(8 << 20)
    (fs.directory / "db.dat").write_bytes(data)
    os.sync()
    fail = device.Params.model_validate({"action": "device", "op": "fail", "device": 2})
    ctx = context(fs, fail)
    assert device.run(fail, ctx) == f"{second} fails both with EIO"
    assert ctx.details == {"op": "fail", "device": second, "mode": "both"}
    (fs.directory / "more.dat").write_bytes(data[: 1 << 20])  # degraded: one copy takes it
    os.sync()
    subprocess.run(["sh", "-c", "echo 3 > /proc/sys/vm/drop_caches"], check=True)
    assert (fs.directory / "db.dat").read_bytes() == data  # read from the other copy
    stats = subprocess.run(["btrfs", "device", "stats", fs.mountpoint], capture_output=True,
                           text=True).stdout
    assert any(line.startswith(f"[{second}].write_io_errs") and not line.endswith(" 0")
               for line in stats.splitlines()), stats
    replace = device.Params.model_validate({"action": "device", "op": "replace", "device": 2})
    ctx = context(fs, replace, timeout=120)
    device.run(replace, ctx)
    assert fs.members() == [first, lab.spares[0]] and not fs.busy(ctx, "replace")
    heal = device.Params.model_validate({"action": "device", "op": "heal"})
    assert device.run(heal, context(fs, heal)) == "healed every device"
    subprocess.run(["btrfs", "scrub", "start", "-B", fs.mountpoint], check=True,
                   capture_output=True)  # both copies whole again
    assert (fs.directory / "db.dat").read_bytes() == data


@pytest.mark.tier2  # one of the suite's longest: the second tier
def test_disk_failure_end_to_end(tmp_path: Path) -> None:
    skip_without_fuse()
    lab_dir = tmp_path / "labs"
    try:
        assay("lab", "create", "btrfs-raid1", "--faulty", "--devices", "2", "--size", "2GiB",
              "--name", "faulty", lab_dir=lab_dir)
        made = labs.load("faulty", lab_dir)
        results = tmp_path / "results"
        started = time.monotonic()
        assay("run", "disk-failure", "--lab", "faulty", "--results", str(results),
              lab_dir=lab_dir)
        assert time.monotonic() - started < 100
        _, run, steps = last_run(results)
        assert run["status"] in ("passed", "failed"), run.get("reason")
        assert [(e["name"], e["outcome"]) for e in steps] == [
            ("disk-fails", "ok"), ("rebuild", "ok"), ("heal", "ok"), ("check", "ok")]
        assert steps[0]["device"] == made.devices[1] and steps[1]["new_device"] == made.spares[0]
        members = subprocess.run(["btrfs", "filesystem", "show", made.mountpoint],
                                 capture_output=True, text=True, check=True).stdout
        assert made.spares[0] in members and made.devices[1] not in members
        graded = {t["expr"]: t for t in run["thresholds"]}
        recovery = graded["db.data.read.recovery <= 15 after rebuild"]
        assert recovery["observed"] is not None, recovery
        rebuild = next(r for r in run["recovery"] if r["step"] == "rebuild")
        assert set(rebuild["components"]) >= {"db.data.read", "db.data.write"}
        assert {p["name"] for p in run["phases"]} >= {"before", "during", "between", "after"}
        # integrity: every acknowledged write survived the failure and the rebuild
        integrity = run["integrity"]
        assert integrity["files"][0]["acknowledged"] > 500, integrity["files"]
        assert [(p["label"], p["status"], p["checked"]) for p in integrity["passes"]] == [
            ("check#1", "completed", 2048), ("final", "completed", 2048)]
        assert all(p[k] == 0 for p in integrity["passes"]
                   for k in ("lost", "stale", "corrupt", "unreadable")), integrity["passes"]
        # and every block of OLTP's own files checksums (fio's verify headers) after the rebuild
        assert all(p["data_files"]["checked"] == p["data_files"]["blocks"] > 15000
                   for p in integrity["passes"]), integrity["passes"]
        assert all(graded[f"integrity.{k} == 0"]["passed"]
                   for k in ("lost", "stale", "corrupt", "unreadable"))
    finally:
        proc = assay("lab", "destroy", "--all", lab_dir=lab_dir, check=False)
    assert "stopped the fault server" in proc.stdout or "unmounted the fault server" in \
        proc.stdout, proc.stdout
    left_behind(made)
