"""`throttle` on a real cgroup v1 blkio group and loop device: the cap is in force (and slows
IO) for the window, then the device gets back the caps it had."""

from __future__ import annotations

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
from assay.hosts.cgroup import BlkioGroup, device_numbers
from assay.platforms.fsbase import ActionFailed
from assay.scenario.models import Throttle
from tests.actions.support import context, fs_platform, local_platform
from tests.realfs import Machine


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


def timed_reads(group: BlkioGroup, dev: str, count: int) -> float:
    """Seconds for `count` direct 4k reads of `dev` by a process inside `group`."""
    t0 = time.monotonic()
    subprocess.run(["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(group.path / "cgroup.procs"),
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


def test_caps_for_the_window_then_removes_them(machine: Machine,
                                               blkio_group: BlkioGroup) -> None:
    fs = fs_platform(machine, "xfs")
    dev = fs.devices()[0]
    numbers = device_numbers(dev)
    p = cap(device=1, read_iops=40, write_bps="8MiB", **{"for": "1.5s"})
    ctx = context(fs, p, group=blkio_group)
    with in_background(p, ctx) as (th, out):
        # write_bps is the last cap written: once it is there, all are
        assert wait_for(lambda: blkio_group.limits().get("write_bps") == f"{numbers} {8 << 20}")
        assert blkio_group.limits()["read_iops"] == f"{numbers} 40"
        slow = timed_reads(blkio_group, dev, 30)  # 30 reads at 40 IOPS: most of a second
        th.join(5)
        assert not th.is_alive() and not ctx.stop.is_set()  # the window ended by itself
    assert blkio_group.limits() == {}
    fast = timed_reads(blkio_group, dev, 30)
    assert slow > 0.4 and fast < slow / 2, (slow, fast)
    assert out == [f"{dev} capped at read_iops 40, write_bps {8 << 20} for 1.5s"]
    assert ctx.details == {"device": dev, "read_iops": 40, "write_bps": 8 << 20}


def test_the_target_caps_come_back_after_the_window(machine: Machine,
                                                    blkio_group: BlkioGroup) -> None:
    fs = fs_platform(machine, "xfs")
    dev = fs.devices()[0]
    fs.target.throttle = [Throttle(device=dev, read_iops=500, write_iops=300)]
    fs.apply_limits(blkio_group)
    p = cap(device=dev, read_iops=20, **{"for": "0.3s"})
    throttle.run(p, context(fs, p, group=blkio_group))
    numbers = device_numbers(dev)
    assert blkio_group.limits() == {"read_iops": f"{numbers} 500",
                                    "write_iops": f"{numbers} 300"}


def test_the_end_of_the_run_ends_an_open_window(machine: Machine,
                                               blkio_group: BlkioGroup) -> None:
    fs = fs_platform(machine, "xfs")
    p = cap(write_iops=25)  # no `for`: until the run ends
    ctx = context(fs, p, group=blkio_group)
    with in_background(p, ctx) as (th, out):
        assert wait_for(lambda: "write_iops" in blkio_group.limits())
        time.sleep(0.25)
        assert th.is_alive()
        ctx.stop.set()
        th.join(3)
        assert not th.is_alive() and blkio_group.limits() == {}
    assert out == [f"{fs.devices()[0]} capped at write_iops 25"]


def test_a_timeout_still_restores_the_device(machine: Machine,
                                             blkio_group: BlkioGroup) -> None:
    fs = fs_platform(machine, "xfs")
    p = cap(read_iops=30, timeout="0.3s", **{"for": "30s"})
    with pytest.raises(ActionFailed):  # StepTimeout
        throttle.run(p, context(fs, p, group=blkio_group, timeout=0.3))
    assert blkio_group.limits() == {}


def test_refuses_what_is_not_a_block_device(machine: Machine, blkio_group: BlkioGroup,
                                            tmp_path: Path) -> None:
    fs = fs_platform(machine, "xfs")
    p = cap(device=str(tmp_path), read_iops=10)
    with pytest.raises(ActionFailed, match=f"cannot throttle {tmp_path}: .*not a block device"):
        throttle.run(p, context(fs, p, group=blkio_group))
    p = cap(device=3, read_iops=10)
    with pytest.raises(ActionFailed, match=r"device 3: the platform has 1"):
        throttle.run(p, context(fs, p, group=blkio_group))
    assert blkio_group.limits() == {}
