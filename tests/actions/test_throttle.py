"""`throttle` on a real cgroup v1 blkio group and loop device: the cap is in force (and slows
IO) for the window, then the device gets back the caps it had."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pydantic import ValidationError

from assay.actions import throttle
from assay.actions.context import ActionContext
from assay.exitcodes import UserError
from assay.participants.blkio import BlkioGroups
from assay.plan import LOCAL
from assay.platforms.fsbase import ActionFailed
from assay.scenario.models import Throttle
from tests.actions.support import context, fs_platform, local_platform
from tests.realfs import Machine, MakeBlkio


def cap(**kw: object) -> throttle.Params:
    return throttle.Params.model_validate(kw)


@contextmanager
def in_background(p: throttle.Params, ctx: ActionContext) \
        -> Iterator[tuple[threading.Thread, list[str]]]:
    """The action in its own thread, as the timeline runs it; ended before the group goes."""
    out: list[str] = []
    th = threading.Thread(target=lambda: out.append(throttle.run(p, ctx)), daemon=True)
    th.start()
    try:
        yield th, out
    finally:
        ctx.stop.set()
        th.join(5)


def wait_for(cond: Callable[[], bool], timeout: float = 3.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def device_numbers(dev: str) -> str:
    st = os.stat(dev)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def limits(group: BlkioGroups) -> dict[str, str]:
    return group.in_force()[LOCAL]


def timed_reads(group: BlkioGroups, dev: str, count: int) -> float:
    """Seconds for `count` direct 4k reads of `dev` by a process inside `group`."""
    t0 = time.monotonic()
    subprocess.run(["sh", "-c", 'echo $$ > "$0" && exec "$@"', group.procs()[LOCAL],
                    "dd", f"if={dev}", "of=/dev/null", "bs=4k", f"count={count}",
                    "iflag=direct"], check=True, capture_output=True)
    return time.monotonic() - t0


def test_params_need_a_cap() -> None:
    with pytest.raises(ValidationError, match="at least one of read_iops"):
        cap(device=1)
    p = cap(read_bps="4MiB", **{"for": "2s"})
    assert p.read_bps == 4 << 20 and p.window == 2
    assert throttle.requires(p) == set()


def test_without_blkio_it_fails_clearly(tmp_path: Path) -> None:
    p = cap(read_iops=10)
    with pytest.raises(ActionFailed, match="needs cgroup v1 blkio"):
        throttle.run(p, context(local_platform(tmp_path), p, group=None))


def test_caps_for_the_window_then_removes_them(machine: Machine, blkio: MakeBlkio) -> None:
    fs = fs_platform(machine, "xfs")
    dev = fs.devices()[0]
    numbers = device_numbers(dev)
    group = blkio([dev], fs.devices())
    p = cap(device=1, read_iops=40, write_bps="8MiB", **{"for": "1.5s"})
    ctx = context(fs, p, group=group)
    with in_background(p, ctx) as (th, out):
        # write_bps is the last cap written: once it is there, all are
        assert wait_for(lambda: limits(group).get("write_bps") == f"{numbers} {8 << 20}")
        assert limits(group)["read_iops"] == f"{numbers} 40"
        slow = timed_reads(group, dev, 30)  # 30 reads at 40 IOPS: most of a second
        th.join(5)
        assert not th.is_alive() and not ctx.stop.is_set()  # the window ended by itself
    assert limits(group) == {}
    fast = timed_reads(group, dev, 30)
    assert slow > 0.4 and fast < slow / 2, (slow, fast)
    assert out == [f"{dev} capped at read_iops 40, write_bps {8 << 20} for 1.5s"]
    assert ctx.details == {"device": dev, "read_iops": 40, "write_bps": 8 << 20,
                           "hosts": {LOCAL: {"read_iops": f"{numbers} 40",
                                             "write_bps": f"{numbers} {8 << 20}"}}}


def test_the_target_caps_come_back_after_the_window(machine: Machine, blkio: MakeBlkio) -> None:
    fs = fs_platform(machine, "xfs")
    dev = fs.devices()[0]
    fs.target.throttle = [Throttle(device=dev, read_iops=500, write_iops=300)]
    group = blkio([dev], fs.devices())
    group.limit(dev, read_iops=500, write_iops=300)
    p = cap(device=dev, read_iops=20, **{"for": "0.3s"})
    throttle.run(p, context(fs, p, group=group))
    numbers = device_numbers(dev)
    assert limits(group) == {"read_iops": f"{numbers} 500", "write_iops": f"{numbers} 300"}


def test_the_end_of_the_run_ends_an_open_window(machine: Machine, blkio: MakeBlkio) -> None:
    fs = fs_platform(machine, "xfs")
    group = blkio(fs.devices(), fs.devices())
    p = cap(write_iops=25)  # no `for`: until the run ends
    ctx = context(fs, p, group=group)
    with in_background(p, ctx) as (th, out):
        assert wait_for(lambda: "write_iops" in limits(group))
        time.sleep(0.25)
        assert th.is_alive()
        ctx.stop.set()
        th.join(3)
        assert not th.is_alive() and limits(group) == {}
    assert out == [f"{fs.devices()[0]} capped at write_iops 25"]


def test_a_timeout_still_restores_the_device(machine: Machine, blkio: MakeBlkio) -> None:
    fs = fs_platform(machine, "xfs")
    group = blkio(fs.devices(), fs.devices())
    p = cap(read_iops=30, timeout="0.3s", **{"for": "30s"})
    with pytest.raises(ActionFailed):  # StepTimeout
        throttle.run(p, context(fs, p, group=group, timeout=0.3))
    assert limits(group) == {}


def test_without_a_device_it_caps_the_one_under_the_target(machine: Machine,
                                                          blkio: MakeBlkio) -> None:
    """A platform that lists no devices (a plain directory, a cluster's hosts): the step caps
    the disk that holds the target, as each host of a cluster run does."""
    dev, mnt = machine.filesystem("xfs")
    plat = local_platform(mnt)
    group = blkio(["target"], [], str(mnt / "not-yet"))  # the nearest existing parent counts
    p = cap(read_iops=35, **{"for": "0.3s"})
    ctx = context(plat, p, group=group)
    assert throttle.run(p, ctx) == "target capped at read_iops 35 for 0.3s"
    assert ctx.details["hosts"] == {LOCAL: {"read_iops": f"{device_numbers(dev)} 35"}}
    assert limits(group) == {}


def test_refuses_what_was_not_checked_before_the_run(machine: Machine, blkio: MakeBlkio,
                                                     tmp_path: Path) -> None:
    fs = fs_platform(machine, "xfs")
    with pytest.raises(UserError, match=f"local: cannot throttle there: {tmp_path} is not a "
                                        "block device there"):
        blkio([str(tmp_path)], fs.devices())
    group = blkio(fs.devices(), fs.devices())
    p = cap(device="/dev/loop-never-checked", read_iops=10)
    with pytest.raises(ActionFailed, match="cannot throttle /dev/loop-never-checked: local: "
                                           "/dev/loop-never-checked was not checked there"):
        throttle.run(p, context(fs, p, group=group))
    p = cap(device=3, read_iops=10)
    with pytest.raises(ActionFailed, match=r"device 3: the platform has 1"):
        throttle.run(p, context(fs, p, group=group))
    assert limits(group) == {}


class SlowHosts:
    """Hosts whose report of their caps is slow to come back (SSH under load), and one that
    may refuse a cap: the action's timing and clean-up, apart from cgroups."""

    def __init__(self, report_s: float = 0.0, refuse: bool = False):
        self.report_s, self.refuse = report_s, refuse
        self.caps: dict[str, dict[str, int]] = {"n1": {}, "n2": {}}

    def device(self, asked: str | int | None) -> str:
        return "target"

    def limit(self, device: str, **caps: int) -> None:
        self.caps["n1"] = {k: v for k, v in caps.items() if v}  # n1 takes every cap
        if self.refuse and any(caps.values()):
            raise ValueError("n2: no cgroup v1 blkio at /sys/fs/cgroup/blkio")
        self.caps["n2"] = dict(self.caps["n1"])

    def in_force(self) -> dict[str, dict[str, str]]:
        time.sleep(self.report_s)
        return {h: {k: f"7:0 {v}" for k, v in c.items()} for h, c in self.caps.items()}


def test_the_window_runs_from_when_the_caps_are_in_force(tmp_path: Path) -> None:
    hosts = SlowHosts(report_s=0.6)
    p = cap(read_iops=30, **{"for": "1s"})
    t0 = time.monotonic()
    throttle.run(p, context(local_platform(tmp_path), p, group=hosts))
    took = time.monotonic() - t0
    assert 1.0 <= took < 1.4, took  # not 1 s after the slow report: 1.6 s
    assert hosts.caps == {"n1": {}, "n2": {}}


def test_a_host_that_refuses_the_cap_leaves_none_on_the_others(tmp_path: Path) -> None:
    hosts = SlowHosts(refuse=True)
    p = cap(read_iops=30, **{"for": "1s"})
    with pytest.raises(ActionFailed, match="^cannot throttle target: n2: no cgroup v1 blkio"):
        throttle.run(p, context(local_platform(tmp_path), p, group=hosts))
    assert hosts.caps["n1"] == {}  # n1 had taken it: given back
